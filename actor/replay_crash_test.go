//go:build unix

package actor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test replays a file in child processes — this test binary,
// re-run with replayChildEnv set — that die by their own SIGKILL at a
// point of the replay, k passes in, as if killed there:
//
//	handler    inside a handler, before its effect
//	taken      a letter's task ended, before it is recorded as moved
//	recorded   a letter recorded as moved, before the next is sent
//	rewritten  the file's rewrite synced under its temporary name
//	renamed    the rewrite renamed over the file
//
// then lets a last one finish. The handler writes each letter
// it completes to a ledger. Every letter must be in it, and the letters in
// it twice must be no more than the kills: a kill sends at most one letter
// twice. Letters whose payload is a multiple of 10 fail the first time
// they run, and go back to the file as new letters, which a later replay
// sends; the file also holds lines that no longer decode, which must be
// all it holds at the end.
const (
	replayChildEnv  = "ACTOR_REPLAY_CHILD"   // the test's directory; set in children
	replayKillAtEnv = "ACTOR_REPLAY_KILL_AT" // "<point> <k>"
)

func TestReplayCrash(t *testing.T) {
	if dir := os.Getenv(replayChildEnv); dir != "" {
		replayChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("re-runs the test binary a dozen times")
	}
	noLeaks(t)
	dir := t.TempDir()
	const letters = 100
	var content strings.Builder
	var bad []string
	for i := 1; i <= letters; i++ {
		content.WriteString(line(t, i) + "\n")
		if i%30 == 0 { // an int field that a deploy made a string
			b := fmt.Sprintf(`{"actor":"audit","reason":"max attempts","task":{"id":%d,"payload":"%d"}}`, i, i)
			bad = append(bad, b)
			content.WriteString(b + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "dead.jsonl"), []byte(content.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	// The kills, in order; the letters that each of the first seven
	// leaves behind, at least 100 - 7*10, are enough for the last two, and
	// then a replay runs to the end.
	plan := []string{"handler", "taken", "recorded", "taken", "handler", "recorded", "taken", "rewritten", "renamed", ""}
	kills := map[string]int{}
	for run, point := range plan {
		k := 1
		if point != "rewritten" && point != "renamed" {
			k += rand.IntN(letters / 10)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestReplayCrash$", "-test.count=1")
		cmd.Env = append(os.Environ(), replayChildEnv+"="+dir, fmt.Sprintf("%s=%s %d", replayKillAtEnv, point, k))
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		switch {
		case point == "" && err == nil:
		case point != "" && errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL &&
			strings.Contains(string(out), "replay child: killed at "+point):
			kills[point]++
		default:
			t.Fatalf("run %d, to be killed at %q pass %d: %v\n%s", run, point, k, err, out)
		}
	}

	// Every letter completed, and no more twice than there were kills.
	seen := map[int]int{}
	f, err := os.Open(filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("ledger line %q", sc.Text())
		}
		seen[n]++
	}
	total, twice := 0, 0
	for _, k := range kills {
		total += k
	}
	for i := 1; i <= letters; i++ {
		switch {
		case seen[i] == 0:
			t.Errorf("letter %d was lost: the handler never completed it", i)
		case seen[i] > 1:
			twice += seen[i] - 1
		}
	}
	t.Logf("%d kills %v; %d letters completed more than once", total, kills, twice)
	if twice > total {
		t.Errorf("%d letters completed more than once after %d kills: a kill may send one letter twice, no more", twice, total)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
	if want := strings.Join(bad, "\n") + "\n"; string(raw) != want {
		t.Errorf("at the end the file holds\n%s\nwant the lines that no longer decode, alone:\n%s", raw, want)
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, "dead.jsonl.rewrite-*")); len(stale) > 0 {
		t.Errorf("rewrites left behind: %v", stale)
	}
}

// replayChild is a child of TestReplayCrash: it replays the file, again
// until a replay finds nothing to send, and dies at its point.
func replayChild(t *testing.T, dir string) {
	var point string
	var k int
	fmt.Sscanf(os.Getenv(replayKillAtEnv), "%s %d", &point, &k)
	die := func(p string) {
		if p == point {
			if k--; k == 0 {
				fmt.Println("replay child: killed at " + p)
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
	replayFaultHook = die

	ledger, err := os.OpenFile(filepath.Join(dir, "ledger"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	failed, err := os.OpenFile(filepath.Join(dir, "failed"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer failed.Close()
	sink, err := OpenFileSink[int](filepath.Join(dir, "dead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	a := newActor(t, "audit", func(ctx context.Context, task Task[int]) error {
		die("handler")
		n := task.Payload
		if n%10 == 0 {
			// Fail the first run of n, as recorded in the file "failed".
			b, err := os.ReadFile(failed.Name())
			if err != nil {
				return err
			}
			if !strings.Contains(string(b), fmt.Sprintf(" %d\n", n)) {
				if _, err := fmt.Fprintf(failed, " %d\n", n); err != nil {
					return err
				}
				return Permanent(errors.New("fails once"))
			}
		}
		_, err := fmt.Fprintf(ledger, "%d\n", n)
		return err
	}, Config[int]{Workers: 2, Capacity: 4, DeadLetters: sink, OnError: func(*TaskError) {}})
	// The first replay sends the letters of the file, the second the
	// failures of the first, the third nothing.
	for i := 0; ; i++ {
		n, err := a.Replay(t.Context(), sink)
		var re *ReplayError
		if err != nil && (!errors.As(err, &re) || re.Err != nil) {
			t.Fatalf("Replay = %d, %v", n, err)
		}
		if n == 0 {
			break
		}
		if i == 3 {
			t.Fatalf("replay %d still sent %d letters: replays do not take the letters out of the file", i+1, n)
		}
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
