package importer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTasks: every build of the index statements is a task with its cost
// (a new index must be priced), each needs the task that writes its
// table, the primary keys are made at the end, and the graph schedules.
func TestTasks(t *testing.T) {
	for _, words := range []bool{false, true} {
		indexes, constraints := indexStatements(words)
		r := &run{}
		tasks := r.tasks("SELECT 1", indexes, words, true)
		byName := map[string]task{}
		for _, tk := range tasks {
			if _, ok := buildCosts[tk.name]; !ok {
				t.Errorf("%q has no cost in buildCosts", tk.name)
			}
			byName[tk.name] = tk
		}
		for _, s := range indexes {
			n := builtName(s)
			if _, ok := byName[n]; !ok && n != "companies_pkey" {
				t.Errorf("%q (%s) is not a task", n, s)
			}
		}
		if words != slices.Contains(slices.Collect(maps.Keys(byName)), "office_words_word") {
			t.Errorf("word tables %v: tasks %v", words, slices.Collect(maps.Keys(byName)))
		}
		for name, needs := range map[string]string{"companies_name_words": "fold", "persons_name_words": "persons",
			"office_signatures_state": "office signatures", "simples_periods_pkey": "periods", "office signatures": "offices_pkey",
			"office_lookups_pkey": "office lookups", "office_lookups_activity": "office lookups", "office lookups": "offices_pkey"} {
			if !slices.Contains(byName[name].needs, needs) {
				t.Errorf("%s needs %v, not %s", name, byName[name].needs, needs)
			}
		}
		for stmt, table := range map[string]string{
			"CREATE STATISTICS offices_email_domain_stats ON (lower(split_part(email, '@', 2))) FROM offices":   "offices",
			"CREATE UNIQUE INDEX persons_pkey ON persons (id)":                                                  "persons",
			"CREATE INDEX offices_alias_words ON offices USING gin (alias_words) WHERE alias_words IS NOT NULL": "offices",
		} {
			if got := builtOn(stmt); got != table {
				t.Errorf("builtOn(%q) = %q, want %q", stmt, got, table)
			}
		}
		if len(byName["offices_state"].needs) != 0 {
			t.Errorf("offices_state waits for %v: the offices are loaded", byName["offices_state"].needs)
		}
		if len(constraints) != 5 {
			t.Errorf("constraints %v", constraints)
		}
		for _, c := range constraints {
			if !strings.Contains(c, "PRIMARY KEY USING INDEX") {
				t.Errorf("constraint %q builds", c)
			}
		}
		// Every task's run is replaced: the graph alone is scheduled.
		for i := range tasks {
			tasks[i].run = func(context.Context) error { return nil }
		}
		if err := schedule(context.Background(), tasks, 2); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTasksWithoutOfficeLookups: office_lookups off, its view is a task
// (priced, needing nothing: its tables exist from the start), and neither
// the table nor its key is.
func TestTasksWithoutOfficeLookups(t *testing.T) {
	indexes, _ := indexStatements(false)
	r := &run{}
	names := map[string][]string{}
	for _, tk := range r.tasks("SELECT 1", indexes, false, false) {
		if _, ok := buildCosts[tk.name]; !ok {
			t.Errorf("%q has no cost in buildCosts", tk.name)
		}
		names[tk.name] = tk.needs
	}
	if needs, ok := names["office lookups view"]; !ok || len(needs) != 0 {
		t.Errorf("office lookups view: a task %v, needing %v", ok, needs)
	}
	for _, n := range []string{"office lookups", "office_lookups_pkey", "office_lookups_activity"} {
		if _, ok := names[n]; ok {
			t.Errorf("%s is a task without office_lookups", n)
		}
	}
}

// TestScheduleOrder: a task starts only after what it needs, at most
// workers run at once, and the longest chain starts first.
func TestScheduleOrder(t *testing.T) {
	for _, workers := range []int{1, 2} {
		order, most := runSteps(t, workers)
		if most > workers {
			t.Errorf("%d tasks ran at once with %d workers", most, workers)
		}
		if workers == 1 && order[0] != "a" {
			t.Errorf("the longest chain (a, b, c) did not start first: %v", order)
		}
	}
}

// runSteps schedules a small graph of sleeping tasks and checks that each
// started after what it needs; it returns the order they started in and
// how many ran at once at most.
func runSteps(t *testing.T, workers int) ([]string, int) {
	t.Helper()
	var (
		mu      sync.Mutex
		order   []string
		running int
		most    int
	)
	step := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, name)
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		}
	}
	tasks := []task{
		{name: "short", cost: 1, run: step("short")},
		{name: "a", cost: 1, run: step("a")},
		{name: "b", cost: 1, needs: []string{"a"}, run: step("b")},
		{name: "c", cost: 1, needs: []string{"b"}, run: step("c")},
		{name: "d", cost: 0.5, needs: []string{"a", "short"}, run: step("d")},
		{name: "e", cost: 0.1, run: step("e")},
	}
	if err := schedule(context.Background(), tasks, workers); err != nil {
		t.Fatal(err)
	}
	at := func(n string) int { return slices.Index(order, n) }
	if len(order) != len(tasks) {
		t.Fatalf("ran %v", order)
	}
	for _, tk := range tasks {
		for _, n := range tk.needs {
			if at(n) > at(tk.name) {
				t.Errorf("%s started before %s, which it needs: %v", tk.name, n, order)
			}
		}
	}
	return order, most
}

// TestScheduleErrors: a failed task stops the schedule with its error,
// tasks that need it never run; a missing need and a cycle are refused.
func TestScheduleErrors(t *testing.T) {
	boom := errors.New("boom")
	var ran []string
	var mu sync.Mutex
	note := func(n string) func(context.Context) error {
		return func(context.Context) error { mu.Lock(); ran = append(ran, n); mu.Unlock(); return nil }
	}
	err := schedule(context.Background(), []task{
		{name: "a", run: func(context.Context) error { return boom }},
		{name: "b", needs: []string{"a"}, run: note("b")},
	}, 2)
	if !errors.Is(err, boom) || len(ran) != 0 {
		t.Errorf("err %v, ran %v", err, ran)
	}
	if err := schedule(context.Background(), []task{{name: "a", needs: []string{"x"}, run: note("a")}}, 2); err == nil {
		t.Error("a missing need was accepted")
	}
	if err := schedule(context.Background(), []task{
		{name: "a", needs: []string{"b"}, run: note("a")},
		{name: "b", needs: []string{"a"}, run: note("b")},
	}, 2); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a cycle: %v", err)
	}
}
