package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
	"github.com/actorpool/actorpool/pgpool"
)

// Environment of the browser test.
const (
	// requireBrowserEnv, set to 1, fails the browser test where it would
	// skip for want of Chromium or PostgreSQL; CI=true does too.
	requireBrowserEnv = "ACTORPOOL_REQUIRE_BROWSER"
	// screenshotEnv names a file the browser test writes a full-page PNG
	// of the actors page to: how docs/console.png is made.
	screenshotEnv = "ACTORPOOL_CONSOLE_SCREENSHOT"
	// chromiumEnv names the browser to run, when not chromium on PATH.
	chromiumEnv = "ACTORPOOL_CHROMIUM"
)

// requireBrowser reports whether a missing browser or database fails the
// test rather than skipping it.
func requireBrowser() bool {
	ci := os.Getenv("CI")
	return os.Getenv(requireBrowserEnv) == "1" || (ci != "" && ci != "0" && ci != "false")
}

// chromium returns the path of the headless browser, skipping t, or
// failing it where the browser is required, when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "browser test: no Chromium on PATH (install Debian's chromium package, or set " + chromiumEnv + "); bash .ci/run installs it"
	if requireBrowser() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// postgres returns the database URL, as testenv.Postgres does, failing t
// where the browser test is required.
func postgres(t *testing.T) string {
	t.Helper()
	if os.Getenv(testenv.PostgresVar) == "" && requireBrowser() {
		t.Fatalf("browser test: %s is unset, and %s=1 or CI requires this test", testenv.PostgresVar, requireBrowserEnv)
	}
	return testenv.Postgres(t)
}

// mail is the payload of the browser test's actor.
type mail struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

// poisonTo is the address whose first mail fails, to make a dead letter
// to replay; every mail to bounceTo fails, to make one to delete.
const (
	poisonTo = "nobody@example.invalid"
	bounceTo = "bounce@example.invalid"
)

// TestBrowser drives the console in headless Chromium over a real actor
// in PostgreSQL, as an operator would: it finds a dead letter by way of
// the page's links, replays it and sees it complete; pauses an actor
// through the page, sees its tasks wait, and resumes it; and, on a
// console with a token, sees a write action refused until it logs in.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	dsn := postgres(t)
	testenv.CheckGoroutines(t)

	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	defer cancel()
	pool := newPool(t, dsn)
	schema := newSchema(t, pool)

	var failed atomic.Bool
	handle := func(ctx context.Context, task actor.Task[mail]) error {
		switch {
		case task.Payload.To == poisonTo && failed.CompareAndSwap(false, true):
			return errors.New("smtp: 550 mailbox unavailable")
		case task.Payload.To == bounceTo:
			return errors.New("smtp: 551 user not local")
		case task.Payload.Subject == "digest":
			time.Sleep(20 * time.Millisecond) // for the screenshot's chart: a queue that drains, not one that vanishes
		}
		return nil
	}
	a, err := pgactor.New(ctx, pool, "mail", handle, pgactor.Config[mail]{Schema: schema, Workers: 2, MaxAttempts: 1,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if _, err := a.Send(ctx, mail{To: "ann@example.com", Subject: "welcome"}); err != nil {
		t.Fatal(err)
	}
	poison, err := a.Send(ctx, mail{To: poisonTo, Subject: "welcome"})
	if err != nil {
		t.Fatal(err)
	}
	bounce, err := a.Send(ctx, mail{To: bounceTo, Subject: "welcome"})
	if err != nil {
		t.Fatal(err)
	}
	// An actor without workers in this process, whose tasks wait.
	audit, err := pgactor.New[mail](ctx, pool, "audit", nil, pgactor.Config[mail]{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close(context.Background())
	for range 3 {
		if _, err := audit.Send(ctx, mail{To: "ops@example.com", Subject: "login"}); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := pgactor.NewAdmin(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	waitStats(t, ctx, a, "one completed, two dead letters", func(s pgactor.Stats) bool { return s.Completed == 1 && s.DeadLetters == 2 })

	c, err := New(Postgres(admin), Options{Interval: 500 * time.Millisecond, Samples: 40, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	const token = "browser-test-token-0123"
	guarded, err := New(Postgres(admin), Options{Interval: time.Hour, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	gsrv := httptest.NewServer(guarded.Handler())
	defer gsrv.Close()
	sampling, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopSampling()
	wg.Go(func() { c.Run(sampling) })

	br := newBrowser(t, ctx, exe)
	run, text, bctx := br.run, br.text, br.ctx

	// A dead letter, found by way of the page, replayed, and completed.
	// The first action starts the browser, which lives as long as the
	// context of that call: no step timeout on it.
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#actor-mail"))); err != nil {
		t.Fatalf("browser: open the actors page: %v", err)
	}
	if got := text("#actor-mail .deadletters"); got != "2" {
		t.Errorf("the actors page shows %q dead letters, want 2", got)
	}
	row := fmt.Sprintf("#task-%d", poison)
	run("go to the dead letters", chromedp.Click(chromedp.CSS("#nav-dead")), chromedp.WaitVisible(chromedp.CSS(row)))
	if got := text(row); !strings.Contains(got, "smtp: 550 mailbox unavailable") || !strings.Contains(got, "dead") {
		t.Errorf("the dead letter's row says %q, want its state and error", got)
	}
	run("open the dead letter", chromedp.Click(chromedp.CSS(row+" a")), chromedp.WaitVisible(chromedp.CSS("#task-state")))
	if got := text("pre.payload"); !strings.Contains(got, `"to": "`+poisonTo+`"`) {
		t.Errorf("the task page shows the payload %q, want it indented", got)
	}
	bounceRow := fmt.Sprintf("#task-%d", bounce)
	run("replay it, and see it gone from the actor's dead letters", chromedp.Click(chromedp.CSS("button.replay")),
		chromedp.WaitVisible(chromedp.CSS(bounceRow)), poll(`document.querySelector("h1").textContent === "Dead letters" && !document.querySelector("`+row+`")`))
	run("delete the other", chromedp.Click(chromedp.CSS(bounceRow+" button.delete")), chromedp.WaitVisible(chromedp.CSS("p.empty")))
	if _, err := admin.Task(ctx, bounce); !errors.Is(err, pgactor.ErrNoTask) {
		t.Errorf("the deleted dead letter: Admin.Task says %v, want ErrNoTask", err)
	}
	run("see it complete", chromedp.Navigate(srv.URL+"/"),
		poll(`document.querySelector("#actor-mail .completed").textContent.trim() === "2" &&
			document.querySelector("#actor-mail .deadletters").textContent.trim() === "0"`))
	if s, err := a.Stats(ctx); err != nil || s.Completed != 2 || s.DeadLetters != 0 || s.Replayed != 1 {
		t.Errorf("after the replay: %+v, %v; want 2 completed, 1 replayed, no dead letter", s, err)
	}

	// Pause through the page: tasks sent wait; resume: they run.
	run("pause", chromedp.Navigate(srv.URL+"/"), chromedp.Click(chromedp.CSS("#actor-mail button.pause")),
		chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.paused")))
	if !paused(t, ctx, admin) {
		t.Fatal("the page says paused, the Admin does not")
	}
	for i := range 24 {
		if _, err := a.Send(ctx, mail{To: fmt.Sprintf("user%d@example.com", i), Subject: "news"}); err != nil {
			t.Fatal(err)
		}
	}
	run("see the depth rise", poll(`document.querySelector("#actor-mail .depth-now").textContent.trim() === "24"`))
	if s, err := a.Stats(ctx); err != nil || s.Queued != 24 || s.Completed != 2 {
		t.Errorf("paused: %+v, %v; want 24 queued, none taken", s, err)
	}
	// The queued tasks, ten to a page.
	rows := `document.querySelectorAll("tbody tr.state-queued").length`
	run("list the queued tasks", chromedp.Click(chromedp.CSS("#actor-mail .queued a")),
		chromedp.WaitVisible(chromedp.CSS(`table.tasks[data-after="0"]`)), poll(rows+` === 10`))
	for _, want := range []int{10, 4} {
		next, err := chromedp.Run(bctx, chromedp.Evaluate[string](`new URL(document.querySelector("a.next").href).searchParams.get("after")`))
		if err != nil {
			t.Fatalf("browser: the next page's cursor: %v", err)
		}
		run("the next page", chromedp.Click(chromedp.CSS("a.next")),
			chromedp.WaitVisible(chromedp.CSS(`table.tasks[data-after="`+next+`"]`)), poll(fmt.Sprintf("%s === %d", rows, want)))
	}
	if n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("a.next").length`)); err != nil || n != 0 {
		t.Errorf("the last page of queued tasks has %d links to a next page (%v), want none", n, err)
	}
	run("back to the actors", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.paused")))
	run("resume", chromedp.Click(chromedp.CSS("#actor-mail button.resume")),
		chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.running")),
		poll(`document.querySelector("#actor-mail .completed").textContent.trim() === "26"`))
	if paused(t, ctx, admin) {
		t.Error("the page says resumed, the Admin says paused")
	}
	if path := os.Getenv(screenshotEnv); path != "" {
		// A queue that builds up while the actor is paused, and drains.
		if err := admin.Pause(ctx, "mail"); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			for range 8 {
				if _, err := a.Send(ctx, mail{To: "list@example.com", Subject: "digest"}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(400 * time.Millisecond)
		}
		if err := admin.Resume(ctx, "mail"); err != nil {
			t.Fatal(err)
		}
		if err := admin.Pause(ctx, "audit"); err != nil {
			t.Fatal(err)
		}
		waitStats(t, ctx, a, "the digests done", func(s pgactor.Stats) bool { return s.Completed == 26+48 })
		run("let the chart take a few samples more", chromedp.Sleep(3*time.Second))
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("browser: screenshot: %v", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A console with a token: a write action without it is refused,
	// changing nothing; after the login it goes through.
	run("pause without the token", chromedp.Navigate(gsrv.URL+"/"), chromedp.Click(chromedp.CSS("#actor-mail button.pause")),
		chromedp.WaitVisible(chromedp.CSS("#failure")))
	if got := text("#failure"); !strings.Contains(got, "403") || !strings.Contains(got, "needs a token for write actions") {
		t.Errorf("pause without the token: the page says %q, want a 403 that asks for the token", got)
	}
	if paused(t, ctx, admin) {
		t.Fatal("a pause without the token paused the actor")
	}
	run("log in", chromedp.Navigate(gsrv.URL+"/login"), chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)), chromedp.WaitVisible(chromedp.CSS("#actor-mail")),
		chromedp.Click(chromedp.CSS("#actor-mail button.pause")), chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.paused")))
	if !paused(t, ctx, admin) {
		t.Error("a pause after the login did not pause the actor")
	}
	run("resume", chromedp.Click(chromedp.CSS("#actor-mail button.resume")), chromedp.WaitVisible(chromedp.CSS("#actor-mail .badge.running")))
	br.close()
}

// waitStats waits, within ctx, until the actor's stats satisfy ok.
func waitStats(t *testing.T, ctx context.Context, a *pgactor.Actor[mail], what string, ok func(pgactor.Stats) bool) {
	t.Helper()
	waitFor(t, ctx, a.Stats, what, ok)
}

// paused reports whether the Admin says the actor mail is paused.
func paused(t *testing.T, ctx context.Context, admin *pgactor.Admin) bool {
	t.Helper()
	actors, err := admin.Actors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actors {
		if a.Name == "mail" {
			return a.Paused
		}
	}
	t.Fatal("the Admin lists no actor mail")
	return false
}

var schemaSeq atomic.Int64

// newPool returns a pool on dsn, closed when t ends.
func newPool(t *testing.T, dsn string) *pgpool.Pool {
	t.Helper()
	cfg, err := pgpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 8
	p, err := pgpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// newSchema migrates a schema of the test's own, dropped when t ends.
func newSchema(t *testing.T, p *pgpool.Pool) string {
	t.Helper()
	schema := fmt.Sprintf("actorpool_console_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := pgactor.Migrate(ctx, p, schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}
