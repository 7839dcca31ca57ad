package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserTimeout bounds the whole browser session, and stepTimeout each
// of its steps but the first, which starts the browser.
const (
	browserTimeout = 3 * time.Minute
	stepTimeout    = 30 * time.Second
)

// A browser is a headless Chromium driven by chromedp, with the three
// moves the browser tests make: run steps, read an element's text, and
// wait for the page to satisfy an expression.
type browser struct {
	t     *testing.T
	ctx   context.Context // the browser's: the first action on it starts Chromium
	close func()          // ends the browser; the test's cleanup does too
}

// newBrowser readies the Chromium at exe for t, until ctx ends, close is
// called or t ends. Close it before the servers it browsed, which wait
// for its connections.
func newBrowser(t *testing.T, ctx context.Context, exe string) *browser {
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Headless,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1200, 900))...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	closeBrowser := func() {
		cancelBrowser()
		cancelAlloc()
	}
	t.Cleanup(closeBrowser)
	return &browser{t: t, ctx: bctx, close: closeBrowser}
}

// run does steps, each bounded by stepTimeout, failing the test with what
// they were for.
func (b *browser) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		b.t.Fatalf("browser: %s: %v", what, err)
	}
}

// text returns the text of the element sel selects, trimmed.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("browser: read %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// poll waits until the page's JavaScript expression is true.
func poll(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(stepTimeout))(ctx, tg)
		return err
	})
}

// waitFor waits, within ctx, until the stats that read returns satisfy
// ok, reading every 50ms.
func waitFor[S any](t *testing.T, ctx context.Context, read func(context.Context) (S, error), what string, ok func(S) bool) {
	t.Helper()
	for {
		s, err := read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok(s) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; stats %+v", what, ctx.Err(), s)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
