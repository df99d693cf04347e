package importer

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
)

// task is a piece of the import's work after the load: it runs once the
// tasks it needs have finished, on a session of its own.
type task struct {
	name  string
	needs []string
	cost  float64 // seconds on the bench dump, alone: orders the ready tasks
	run   func(ctx context.Context) error
}

// schedule runs the tasks, at most workers at once, each as soon as what
// it needs is done, the ready task with the longest chain of work behind
// it first. The import is CPU-bound on the server's cores: a worker that
// waits for a lock, or a phase whose last statement runs alone, leaves a
// core idle (the phases of derive, then index, did both, for about a
// tenth of the import).
func schedule(ctx context.Context, tasks []task, workers int) error {
	byName := make(map[string]*task, len(tasks))
	for i := range tasks {
		if _, dup := byName[tasks[i].name]; dup {
			return fmt.Errorf("import tasks: %q twice", tasks[i].name)
		}
		byName[tasks[i].name] = &tasks[i]
	}
	waiting := make(map[string]int, len(tasks)) // needs not yet done
	dependents := map[string][]string{}
	for _, t := range tasks {
		for _, n := range t.needs {
			if byName[n] == nil {
				return fmt.Errorf("import tasks: %q needs %q, which is not a task", t.name, n)
			}
			dependents[n] = append(dependents[n], t.name)
		}
		waiting[t.name] = len(t.needs)
	}
	// rank: a task's cost plus the longest chain of its dependents'.
	rank := map[string]float64{}
	var rankOf func(name string, depth int) float64
	rankOf = func(name string, depth int) float64 {
		if r, ok := rank[name]; ok {
			return r
		}
		if depth > len(tasks) {
			return 0 // a cycle; reported below, as no task becomes ready
		}
		longest := 0.0
		for _, d := range dependents[name] {
			longest = max(longest, rankOf(d, depth+1))
		}
		rank[name] = byName[name].cost + longest
		return rank[name]
	}
	var ready []string
	for _, t := range tasks {
		rankOf(t.name, 0)
		if waiting[t.name] == 0 {
			ready = append(ready, t.name)
		}
	}
	byRank := func(a, b string) int {
		if rank[a] != rank[b] {
			if rank[a] > rank[b] {
				return -1
			}
			return 1
		}
		return 0
	}

	g, gctx := errgroup.WithContext(ctx)
	done := make(chan string)
	running, finished := 0, 0
	for finished < len(tasks) {
		slices.SortStableFunc(ready, byRank)
		for running < workers && len(ready) > 0 {
			t := byName[ready[0]]
			ready = ready[1:]
			running++
			g.Go(func() error {
				if err := t.run(gctx); err != nil {
					return err
				}
				select {
				case done <- t.name:
				case <-gctx.Done():
				}
				return nil
			})
		}
		if running == 0 {
			return fmt.Errorf("import tasks: a cycle among %d unfinished tasks", len(tasks)-finished)
		}
		select {
		case name := <-done:
			running--
			finished++
			for _, d := range dependents[name] {
				if waiting[d]--; waiting[d] == 0 {
					ready = append(ready, d)
				}
			}
		case <-gctx.Done():
			if err := g.Wait(); err != nil {
				return err
			}
			return gctx.Err()
		}
	}
	return g.Wait()
}
