package console_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/cmd/actorpool/internal/console"
	"github.com/actorpool/actorpool/cmd/actorpool/internal/console/jsconsole"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/jsactor"
	"github.com/actorpool/actorpool/jsactor/jsserver"
)

// letter is the payload of the JetStream browser test's actor.
type letter struct {
	To string `json:"to"`
}

// TestBrowserJetStream drives, in headless Chromium, a console over
// actors on NATS JetStream, on an embedded server of its own, as an
// operator would: it finds a dead letter by way of the page's links,
// replays it and sees it complete; sees the states JetStream lacks left
// out of the filter; and pauses an actor through the page, sees its tasks
// wait, and resumes it.
func TestBrowserJetStream(t *testing.T) {
	exe := console.Chromium(t)
	testenv.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(t.Context(), console.BrowserTimeout)
	defer cancel()

	srv, err := jsserver.Start(jsserver.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const poisonTo = "nobody@example.invalid"
	var failed atomic.Bool
	handle := func(ctx context.Context, task actor.Task[letter]) error {
		if task.Payload.To == poisonTo && failed.CompareAndSwap(false, true) {
			return errors.New("smtp: 550 mailbox unavailable")
		}
		return nil
	}
	a, err := jsactor.New(ctx, nc, "mail", handle, jsactor.Config[letter]{Prefix: "browser", Workers: 2, MaxAttempts: 1,
		FlushInterval: 50 * time.Millisecond, OnError: func(*actor.TaskError) {}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	for _, to := range []string{"ann@example.com", poisonTo} {
		if _, err := a.Send(ctx, letter{To: to}); err != nil {
			t.Fatal(err)
		}
	}
	waitStats(t, ctx, a, "one completed, one dead letter", func(s jsactor.Stats) bool { return s.Completed == 1 && s.DeadLetters == 1 })
	ad, err := jsactor.NewAdmin(nc, "browser")
	if err != nil {
		t.Fatal(err)
	}
	dead, err := ad.DeadLetters(ctx, "mail", jsactor.LetterFilter{})
	if err != nil || len(dead) != 1 {
		t.Fatalf("dead letters: %+v, %v; want one", dead, err)
	}

	c, err := console.New(jsconsole.New(ad), console.Options{Interval: 500 * time.Millisecond, Samples: 40, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	hsrv := httptest.NewServer(c.Handler())
	defer hsrv.Close()
	sampling, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopSampling()
	wg.Go(func() { c.Run(sampling) })

	br := console.NewBrowser(t, ctx, exe)
	run, text, poll, bctx := br.Run, br.Text, console.Poll, br.Context()
	isPaused := func() bool {
		t.Helper()
		s, err := ad.Stats(ctx, "mail")
		if err != nil {
			t.Fatal(err)
		}
		return s.Paused
	}

	// The dead letter, found by way of the page, replayed, and completed.
	// The first action starts the browser, which lives as long as the
	// context of that call: no step timeout on it.
	if err := chromedp.Do(bctx, chromedp.Navigate(hsrv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#actor-mail"))); err != nil {
		t.Fatalf("browser: open the actors page: %v", err)
	}
	if got := text("#actor-mail .deadletters"); got != "1" {
		t.Errorf("the actors page shows %q dead letters, want 1", got)
	}
	if got := text("header .schema"); got != "prefix browser" {
		t.Errorf("the header says %q, want the prefix", got)
	}
	// The key names the actor and the dead letter's own ID; CSS takes it
	// as an attribute, for its colons.
	row := fmt.Sprintf(`tr[id="task-mail:dead:%d"]`, dead[0].ID)
	run("go to the dead letters", chromedp.Click(chromedp.CSS("#nav-dead")), chromedp.WaitVisible(chromedp.CSS(row)))
	if got := text(row); !strings.Contains(got, "smtp: 550 mailbox unavailable") || !strings.Contains(got, "dead") || !strings.Contains(got, "max attempts") {
		t.Errorf("the dead letter's row says %q, want its state, reason and error", got)
	}
	if n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('input[name="state"][value="canceling"]').length`)); err != nil || n != 0 {
		t.Errorf("the filter offers the canceling state %d times (%v); JetStream has none", n, err)
	}
	run("open the dead letter", chromedp.Click(chromedp.CSS(row+" a")), chromedp.WaitVisible(chromedp.CSS("#task-state")))
	if got := text("pre.payload"); !strings.Contains(got, `"to": "`+poisonTo+`"`) {
		t.Errorf("the task page shows the payload %q, want it indented", got)
	}
	if got := text("dl.task"); strings.Contains(got, "Priority") || strings.Contains(got, "Owner") {
		t.Errorf("the task page shows %q: want no priority or owner, which JetStream's tasks lack", got)
	}
	run("replay it, and see it gone from the actor's dead letters", chromedp.Click(chromedp.CSS("button.replay")),
		chromedp.WaitVisible(chromedp.CSS("p.empty")),
		poll(`document.querySelector("h1").textContent === "Dead letters" && !document.querySelector('`+row+`')`))
	run("see it complete", chromedp.Navigate(hsrv.URL+"/"),
		poll(`document.querySelector("#actor-mail .completed").textContent.trim() === "2" &&
			document.querySelector("#actor-mail .deadletters").textContent.trim() === "0"`))
	if s, err := a.Stats(ctx); err != nil || s.Completed != 2 || s.DeadLetters != 0 || s.Replayed != 1 {
		t.Errorf("after the replay: %+v, %v; want 2 completed, 1 replayed, no dead letter", s, err)
	}

	// Pause through the page: tasks sent wait; resume: they run.
	run("pause", chromedp.Click(chromedp.CSS("#actor-mail button.pause")),
		chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.paused")))
	if !isPaused() {
		t.Fatal("the page says paused, the Admin does not")
	}
	for i := range 12 {
		if _, err := a.Send(ctx, letter{To: fmt.Sprintf("user%d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	run("see the depth rise", poll(`document.querySelector("#actor-mail .depth-now").textContent.trim() === "12"`))
	// The queued tasks, ten to a page: the cursor names the actor.
	rows := `document.querySelectorAll("tbody tr.state-queued").length`
	run("list the queued tasks", chromedp.Click(chromedp.CSS("#actor-mail .queued a")),
		chromedp.WaitVisible(chromedp.CSS(`table.tasks[data-after="0"]`)), poll(rows+` === 10`))
	next, err := chromedp.Run(bctx, chromedp.Evaluate[string](`new URL(document.querySelector("a.next").href).searchParams.get("after")`))
	if err != nil || !strings.HasPrefix(next, "mail:") {
		t.Fatalf("browser: the next page's cursor %q, %v; want a key of actor mail", next, err)
	}
	run("the next page", chromedp.Click(chromedp.CSS("a.next")),
		chromedp.WaitVisible(chromedp.CSS(`table.tasks[data-after="`+next+`"]`)), poll(rows+` === 2`))
	run("back to the actors", chromedp.Navigate(hsrv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.paused")))
	if s, err := a.Stats(ctx); err != nil || s.Queued != 12 || s.Completed != 2 {
		t.Errorf("paused: %+v, %v; want 12 queued, none taken", s, err)
	}
	run("resume", chromedp.Click(chromedp.CSS("#actor-mail button.resume")),
		chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.running")),
		poll(`document.querySelector("#actor-mail .completed").textContent.trim() === "14"`))
	if isPaused() {
		t.Error("the page says resumed, the Admin says paused")
	}
	br.Close()
}

// waitStats waits, within ctx, until the actor's stats satisfy ok.
func waitStats(t *testing.T, ctx context.Context, a *jsactor.Actor[letter], what string, ok func(jsactor.Stats) bool) {
	t.Helper()
	console.WaitFor(t, ctx, a.Stats, what, ok)
}
