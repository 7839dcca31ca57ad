//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// lockStore does not lock where the kernel's advisory locks are not
// available to this command: two demos or consoles on one --jetstream-dir
// there would share the store, which the NATS server does not lock
// either.
func lockStore(string) (*storeLock, error) { return &storeLock{}, nil }
