package console

// Chromium is chromium, for the browser test of package console_test,
// which drives a console over jsconsole, a package that imports this one.
var Chromium = chromium
