package db

import (
	"math"
	"testing"
)

// TestRareCompanyWords: a names.in is collected when each of its values
// has a word rare enough, by the statistics: a word's companies are its
// frequency times the rows, a word not listed is rarer than the least
// listed, and the bound is sqrt(1.1 rows) (940 of 806,000; 8,124 of 60M).
func TestRareCompanyWords(t *testing.T) {
	bench := &Codes{companyWords: &wordStats{
		freq:  map[string]float64{"ltda": 0.35, "industrial": 0.0016, "palmital": 0.0005},
		least: 0.00027, rows: 806000,
	}}
	registry := &Codes{companyWords: &wordStats{freq: map[string]float64{"comercio": 0.02, "padaria": 0.0001}, least: 0.00005, rows: 60e6}}
	for _, c := range []struct {
		name   string
		codes  *Codes
		values [][]string
		rare   bool
	}{
		{"a listed rare word (403 companies)", bench, [][]string{{"palmital"}}, true},
		{"a common word", bench, [][]string{{"ltda"}}, false},
		{"a word above the bound (1,290)", bench, [][]string{{"industrial"}}, false},
		{"a word not listed (under 218)", bench, [][]string{{"serpro"}}, true},
		{"the rarest word bounds a value", bench, [][]string{{"ltda", "palmital"}}, true},
		{"one common value among rare ones", bench, [][]string{{"palmital"}, {"ltda"}}, false},
		{"no statistics", &Codes{}, [][]string{{"palmital"}}, false},
		{"6,000 of 60M companies", registry, [][]string{{"padaria"}}, true},
		{"1.2M of 60M companies", registry, [][]string{{"comercio"}}, false},
	} {
		if got := c.codes.RareCompanyWords(c.values); got != c.rare {
			t.Errorf("%s: RareCompanyWords(%v) = %v, want %v", c.name, c.values, got, c.rare)
		}
	}
}

// TestStateWalkWords: a names.in with one state walks the state's offices
// when some value's words are each held by at least sqrt(10 rows)
// companies (2,839 of 806,000); without statistics it walks, bounded by
// stateWalkLength.
func TestStateWalkWords(t *testing.T) {
	bench := &Codes{companyWords: &wordStats{
		freq:  map[string]float64{"ltda": 0.35, "vila": 0.0038, "ministerio": 0.003, "palmital": 0.0005},
		least: 0.00027, rows: 806000,
	}}
	for _, c := range []struct {
		name   string
		codes  *Codes
		values [][]string
		walk   bool
	}{
		{"a word of 3,063 companies", bench, [][]string{{"vila"}}, true},
		{"a word of 2,418 companies", bench, [][]string{{"ministerio"}}, false},
		{"a common word with a rare one", bench, [][]string{{"ltda", "palmital"}}, false},
		{"one common value among rare ones", bench, [][]string{{"palmital"}, {"vila"}}, true},
		{"a word not listed", bench, [][]string{{"serpro"}}, false},
		{"no statistics", &Codes{}, [][]string{{"palmital"}}, true},
	} {
		if got := c.codes.StateWalkWords(c.values); got != c.walk {
			t.Errorf("%s: StateWalkWords(%v) = %v, want %v", c.name, c.values, got, c.walk)
		}
	}
}

// TestCommonAliasWords: names.in alone walks the offices for aliases when
// some value has every word among the listed alias words; otherwise (a
// word not listed, or no statistics) its aliases are collected.
func TestCommonAliasWords(t *testing.T) {
	bench := &Codes{aliasWords: &wordStats{freq: map[string]float64{"acougue": 0.066, "alianca": 0.018}, least: 0.0052, rows: 403000}}
	for _, c := range []struct {
		name   string
		codes  *Codes
		values [][]string
		walk   bool
	}{
		{"a listed word", bench, [][]string{{"acougue"}}, true},
		{"two listed words", bench, [][]string{{"acougue", "alianca"}}, true},
		{"a listed word with one not listed", bench, [][]string{{"acougue", "palmital"}}, false},
		{"a word not listed", bench, [][]string{{"palmital"}}, false},
		{"one listed value among others", bench, [][]string{{"palmital"}, {"alianca"}}, true},
		{"no statistics", &Codes{}, [][]string{{"acougue"}}, false},
	} {
		if got := c.codes.CommonAliasWords(c.values); got != c.walk {
			t.Errorf("%s: CommonAliasWords(%v) = %v, want %v", c.name, c.values, got, c.walk)
		}
	}
}

// TestNamesEstimate: a names.in's matches by the statistics: per value,
// the product of its words' company frequencies (a word not listed at
// half the least) times the companies and the offices per company, plus
// its aliases the same way (a word not listed among the aliases counts
// none), times the state's share.
func TestNamesEstimate(t *testing.T) {
	codes := &Codes{
		companyWords:      &wordStats{freq: map[string]float64{"paulo": 0.01, "comercio": 0.2}, least: 0.0003, rows: 806000},
		aliasWords:        &wordStats{freq: map[string]float64{"paulo": 0.005}, least: 0.005, rows: 403000},
		officesPerCompany: 1.25,
		stateShare:        map[string]float64{"SP": 0.15, "AC": 0.005},
	}
	for _, c := range []struct {
		name   string
		values [][]string
		state  string
		want   int64
		ok     bool
	}{
		{"a word", [][]string{{"paulo"}}, "", 10075 + 2015, true},
		{"a word in a state", [][]string{{"paulo"}}, "SP", 1814, true},
		{"two words of one value", [][]string{{"paulo", "comercio"}}, "", 2015, true},
		{"two values", [][]string{{"paulo"}, {"comercio"}}, "AC", 1068, true},
		// 806,000 × 0.01 × 0.00015 companies (half the least listed
		// frequency) × 1.25, and no alias.
		{"a word not listed", [][]string{{"paulo", "serpro"}}, "", 2, true},
		{"a word not listed alone", [][]string{{"serpro"}}, "", 151, true},
		{"a state not listed", [][]string{{"paulo"}}, "ZZ", 0, false},
		{"no statistics", nil, "", 0, false},
	} {
		got, ok := codes.NamesEstimate(c.values, c.state)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: NamesEstimate(%v, %q) = %d, %v; want %d, %v", c.name, c.values, c.state, got, ok, c.want, c.ok)
		}
	}
	if _, ok := (&Codes{}).NamesEstimate([][]string{{"paulo"}}, ""); ok {
		t.Error("an estimate without statistics")
	}
}

// TestPersonNamesEstimate: a person name.in's matches by the statistics,
// as PostgreSQL estimates them: per value, the product of its words'
// frequencies (a word not listed at half the least, at most 0.5 %), the
// values joined as independent alternatives, times the persons.
func TestPersonNamesEstimate(t *testing.T) {
	bench := &Codes{personNameWords: &wordStats{freq: map[string]float64{"maria": 0.06, "silva": 0.05}, least: 0.0002, rows: 415000}}
	sparse := &Codes{personNameWords: &wordStats{freq: map[string]float64{"maria": 0.5}, least: 0.5, rows: 1000}}
	for _, c := range []struct {
		name   string
		codes  *Codes
		values [][]string
		want   int64
		ok     bool
	}{
		{"a word", bench, [][]string{{"maria"}}, 24900, true},
		{"two words of one value", bench, [][]string{{"maria", "silva"}}, 1245, true},
		{"a word not listed: half the least", bench, [][]string{{"sophie"}}, 42, true},
		{"two values", bench, [][]string{{"maria"}, {"silva"}}, 24900 + 20750 - 1245, true},
		{"a word not listed, the least high: 0.5 %", sparse, [][]string{{"sophie"}}, 5, true},
		{"no statistics", &Codes{}, [][]string{{"maria"}}, 0, false},
		{"no value", bench, nil, 0, false},
	} {
		got, ok := c.codes.PersonNamesEstimate(c.values)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: PersonNamesEstimate(%v) = %d, %v; want %d, %v", c.name, c.values, got, ok, c.want, c.ok)
		}
	}
}

// TestUnlistedCompanyWords: a names.in (or a person's name.in) is counted
// whatever its estimate when every value has a word the companies' (the
// persons') statistics do not list.
func TestUnlistedCompanyWords(t *testing.T) {
	codes := &Codes{companyWords: &wordStats{freq: map[string]float64{"ltda": 0.35, "paulo": 0.01}, least: 0.0003, rows: 806000}}
	for _, c := range []struct {
		name     string
		codes    *Codes
		values   [][]string
		unlisted bool
	}{
		{"a word not listed", codes, [][]string{{"serpro"}}, true},
		{"a listed word with one not listed", codes, [][]string{{"ltda", "serpro"}}, true},
		{"a listed word", codes, [][]string{{"paulo"}}, false},
		{"one value of listed words", codes, [][]string{{"serpro"}, {"ltda", "paulo"}}, false},
		{"no statistics", &Codes{}, [][]string{{"serpro"}}, false},
	} {
		if got := c.codes.UnlistedCompanyWords(c.values); got != c.unlisted {
			t.Errorf("%s: UnlistedCompanyWords(%v) = %v, want %v", c.name, c.values, got, c.unlisted)
		}
		persons := &Codes{personNameWords: c.codes.companyWords}
		if got := persons.UnlistedPersonWords(c.values); got != c.unlisted {
			t.Errorf("%s: UnlistedPersonWords(%v) = %v, want %v", c.name, c.values, got, c.unlisted)
		}
	}
}

// TestStateWalkLength: a state's walk is long enough for a page of a word
// at StateWalkWords' bound whatever the registry's size: 5,000 offices for
// the bench dump's companies (and without statistics), growing with the
// square root of the companies, so that a word at the bound (11 × rows /
// sqrt(10 rows) offices for a page of ten) finds its page in the walk.
func TestStateWalkLength(t *testing.T) {
	for _, c := range []struct {
		name     string
		codes    *Codes
		min, max int
	}{
		{"no statistics", &Codes{}, 5000, 5000},
		{"a small dump", &Codes{companyWords: &wordStats{rows: 9000}}, 5000, 5000},
		{"the bench dump", &Codes{companyWords: &wordStats{rows: 806000}}, 5000, 5000},
		{"10M establishments", &Codes{companyWords: &wordStats{rows: 8.07e6}}, 15800, 15830},
		{"the registry", &Codes{companyWords: &wordStats{rows: 67e6}}, 45500, 45650},
	} {
		got := c.codes.stateWalkLength()
		if got < c.min || got > c.max {
			t.Errorf("%s: stateWalkLength() = %d, want %d to %d", c.name, got, c.min, c.max)
		}
		if s := c.codes.companyWords; s != nil && s.rows >= 806000 {
			page := 11 * s.rows / math.Sqrt(10*s.rows) // offices a page of a word at the bound needs
			if float64(got) < 1.5*page {
				t.Errorf("%s: stateWalkLength() = %d, under 1.5 × the %.0f offices a page at the bound needs", c.name, got, page)
			}
		}
	}
}
