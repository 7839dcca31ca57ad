package console

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// tokenCookie holds the token in the browser once the login form took it.
const tokenCookie = "actorpool_console_token"

// write wraps a write action: it runs only for a request that carries
// the token, when there is one.
func (c *Console) write(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.opts.Token != "" {
			switch t, ok := requestToken(r); {
			case !ok:
				c.fail(w, r, http.StatusForbidden, "this console needs a token for write actions, and the request has none: log in at /login (or send an Authorization: Bearer header); nothing was changed")
				return
			case !c.tokenMatches(t):
				c.fail(w, r, http.StatusForbidden, "wrong console token: log in again at /login with the token the console was started with (--token or ACTORPOOL_CONSOLE_TOKEN); nothing was changed")
				return
			}
		}
		h(w, r)
	})
}

// requestToken returns the token r carries, in an Authorization: Bearer
// header or else in its cookie (another Authorization, such as a proxy's
// Basic, is not the console's).
func requestToken(r *http.Request) (string, bool) {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return t, true
	}
	if ck, err := r.Cookie(tokenCookie); err == nil {
		return ck.Value, true
	}
	return "", false
}

func (c *Console) tokenMatches(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(c.opts.Token)) == 1
}

// loginPage asks for the token.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "login", pageData{Title: "Log in", Data: c.opts.Token != ""})
}

// login checks the token from the login form and keeps it in a cookie
// that the browser sends to this console only, and never with a request
// another site starts.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if c.opts.Token == "" {
		c.fail(w, r, http.StatusBadRequest, "this console takes no token: its write actions are open to its own pages")
		return
	}
	if !c.tokenMatches(r.PostFormValue("token")) {
		c.fail(w, r, http.StatusForbidden, "wrong console token: use the one the console was started with (--token or ACTORPOOL_CONSOLE_TOKEN)")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     tokenCookie,
		Value:    c.opts.Token,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
