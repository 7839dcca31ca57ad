package console

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium is chromium, for the browser test of package console_test,
// which drives a console over jsconsole, a package that imports this one.
var Chromium = chromium

// NewBrowser, Browser's Run and Text, and Poll are the browser helpers,
// for the same test.
var (
	NewBrowser = newBrowser
	Poll       = poll
)

// BrowserTimeout bounds the whole browser session.
const BrowserTimeout = browserTimeout

// Run does steps; see browser.run.
func (b *browser) Run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.run(what, steps...)
}

// Context is the browser's context; Close ends it.
func (b *browser) Context() context.Context { return b.ctx }

// Close ends the browser.
func (b *browser) Close() { b.close() }

// Text returns an element's text; see browser.text.
func (b *browser) Text(sel string) string {
	b.t.Helper()
	return b.text(sel)
}

// WaitFor waits until stats satisfy ok; see waitFor.
func WaitFor[S any](t *testing.T, ctx context.Context, read func(context.Context) (S, error), what string, ok func(S) bool) {
	t.Helper()
	waitFor(t, ctx, read, what, ok)
}
