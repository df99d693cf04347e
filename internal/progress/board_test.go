package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
)

func TestLogGetsLinesAndStatusEveryInterval(t *testing.T) {
	var out syncbuf.Buffer
	status := "working 10%"
	b := start(&out, 20*time.Millisecond, func(tty bool) []string {
		if tty {
			t.Error("a log was asked for bars")
		}
		return []string{status}
	}, false)
	b.Printf("phase %s", "load")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "working 10%\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	b.Close()
	got := out.String()
	if !strings.HasPrefix(got, "phase load\n") || strings.Count(got, "working 10%\n") < 2 {
		t.Fatalf("log:\n%s", got)
	}
	if strings.Contains(got, "\x1b[") {
		t.Fatalf("a log got terminal escapes:\n%q", got)
	}
}

func TestTerminalRedrawsBarsUnderTheLines(t *testing.T) {
	var out syncbuf.Buffer
	bars := []string{"a [==  ]", "b [=   ]"}
	b := start(&out, time.Hour, func(tty bool) []string {
		if !tty {
			t.Error("a terminal was asked for log lines")
		}
		return bars
	}, true)
	b.Printf("one")
	b.Do(func() []string { bars = bars[:1]; return []string{"two"} })
	b.Close()
	// Each redraw moves up over the bars drawn last and erases them; Close
	// takes the last bar off.
	want := "one\na [==  ]\nb [=   ]\n" + "\x1b[2A\x1b[J" + "two\na [==  ]\n" + "\x1b[1A\x1b[J"
	if got := out.String(); got != want {
		t.Fatalf("terminal output\n got %q\nwant %q", got, want)
	}
}

func TestBarFractionETA(t *testing.T) {
	if got := Bar(Fraction(15, 30)); got != "["+strings.Repeat("=", 15)+strings.Repeat(" ", 15)+"]" {
		t.Errorf("Bar(1/2) = %q", got)
	}
	if Fraction(5, 0) != 0 || Fraction(50, 10) != 1 {
		t.Errorf("Fraction: unknown total or overshoot not clamped")
	}
	if got := ETA(25, 75, 10*time.Second); got != "30s" {
		t.Errorf("ETA(25 done, 75 left, 10s) = %s, want 30s", got)
	}
	if ETA(0, 10, time.Second) != "-" || ETA(10, 0, time.Second) != "-" {
		t.Errorf("ETA without a pace or with nothing left should be -")
	}
}
