package graphqlapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/words"
)

// world is every office and person of an imported generated dump, read
// through the lookups' own path: the oracle the searches are checked
// against. Each case's expected set comes from a Go predicate over these
// models (IBGE and M49 codes, texts already decoded), never from SQL.
type world struct {
	offices []model.Office // tax id order
	persons []model.Person // id order
}

// generatedServer imports a generated dump (3,000 companies), with the word
// tables, into its own database and serves it.
func generatedServer(t *testing.T) (*server, world) {
	t.Helper()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	if _, err := generator.Generate(generator.Options{Companies: 3000, Out: dir, Seed: 11, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Import(context.Background(), d, importer.Options{Paths: []string{dir}, WordTables: importer.On}); err != nil {
		t.Fatal(err)
	}
	return serverOver(t, d, serverOptions{}), loadWorld(t, d)
}

// TestSearch checks the searches on one generated dump.
func TestSearch(t *testing.T) {
	t.Parallel()
	s, w := generatedServer(t)
	t.Run("OfficeFilters", func(t *testing.T) { testOfficeFilters(t, s, w) })
	t.Run("OfficeFiltersCollected", func(t *testing.T) {
		// Every search counted exactly and small enough to be read whole
		// and sorted on each page, never walked.
		settings := service.DefaultSearchSettings
		settings.CountLimit, settings.CountBudget, settings.CollectBelow = 1_000_000, time.Minute, 1_000_000
		testOfficeFilters(t, serverOver(t, s.db, serverOptions{search: &settings}), w)
	})
	t.Run("PersonFilters", func(t *testing.T) { testPersonFilters(t, s, w) })
	t.Run("SameThroughGraphQL", func(t *testing.T) { testSameThroughGraphQL(t, s, w) })
	t.Run("EdgeCursors", func(t *testing.T) { testEdgeCursors(t, s) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, s, w) })
	t.Run("RecordsAreLookups", func(t *testing.T) { testRecordsAreLookups(t, s) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, s) })
	t.Run("CountBounds", func(t *testing.T) { testCountBounds(t, s, w) })
	t.Run("ReadsTheWordTables", func(t *testing.T) { testReadsTheWordTables(t, s, w) })
	// Last: it drops the word table, as a snapshot imported without it
	// (or before it existed) lacks it; its server then uses the GIN
	// indexes alone.
	t.Run("WithoutWordTables", func(t *testing.T) {
		s.exec(t, "DROP TABLE cnpj.office_words, cnpj.person_words")
		without := serverOver(t, s.db, serverOptions{})
		testOfficeFilters(t, without, w)
		testPersonFilters(t, without, w)
	})
}

// testReadsTheWordTables: a one-value name search answers from the word
// table, alone, with a state, with another filter and with several words.
// With the office's row of the word taken out of office_words, it is no
// longer found by that word.
func testReadsTheWordTables(t *testing.T, s *server, w world) {
	var target model.Office
	var ws []string
	for _, o := range w.offices {
		if ws = words.Of(o.Company.Name); len(ws) >= 2 && !hasWords(alias(o), ws[0]) {
			target = o
			break
		}
	}
	word := ws[0]
	for _, query := range []string{
		"names.in=" + word,
		"names.in=" + word + "&address.state.in=" + target.Address.State,
		"names.in=" + word + "&address.state.in=" + target.Address.State + "&status.id.in=" + strconv.Itoa(target.Status.ID),
		"names.in=" + url.QueryEscape(word+" "+ws[1]),
	} {
		found := func() bool {
			got, _ := s.walk(t, "/office", query, "taxId", 1000)
			return slices.Contains(got, target.TaxID)
		}
		if !found() {
			t.Fatalf("%s: %s not found", query, target.TaxID)
		}
		s.exec(t, "DELETE FROM cnpj.office_words WHERE word = $1 AND tax_id = $2", word, target.TaxID)
		if found() {
			t.Errorf("%s: %s found without its row in office_words: the search did not read the word table", query, target.TaxID)
		}
		s.exec(t, "INSERT INTO cnpj.office_words VALUES ($1, $2, $3)", word, target.TaxID, target.Address.State)
	}

	// A person's name word, alone and with another filter, from
	// person_words.
	person := w.persons[len(w.persons)/3]
	pw := words.Of(person.Name)
	for _, query := range []string{"name.in=" + pw[0], "name.in=" + pw[0] + "&type.in=" + person.Type} {
		found := func() bool {
			got, _ := s.walk(t, "/person", query, "id", 1000)
			return slices.Contains(got, person.ID)
		}
		if !found() {
			t.Fatalf("%s: %s not found", query, person.ID)
		}
		s.exec(t, "DELETE FROM cnpj.person_words WHERE word = $1 AND id = $2", pw[0], person.ID)
		if found() {
			t.Errorf("%s: %s found without its row in person_words: the search did not read the word table", query, person.ID)
		}
		s.exec(t, "INSERT INTO cnpj.person_words VALUES ($1, $2)", pw[0], person.ID)
	}

	// A value's words must all be in one name: an office with one in its
	// company's name and the other in its alias only is not found.
	for _, o := range w.offices {
		name, as := words.Of(o.Company.Name), words.Of(alias(o))
		n := slices.IndexFunc(name, func(x string) bool { return !slices.Contains(as, x) })
		a := slices.IndexFunc(as, func(x string) bool { return !slices.Contains(name, x) })
		if n < 0 || a < 0 {
			continue
		}
		query := "names.in=" + url.QueryEscape(name[n]+" "+as[a])
		if got, _ := s.walk(t, "/office", query, "taxId", 1000); slices.Contains(got, o.TaxID) {
			t.Errorf("%s: %s found, with %q in its company's name and %q in its alias only", query, o.TaxID, name[n], as[a])
		}
		return
	}
	t.Fatal("the generated dump has no office with a word in its name only and one in its alias only")
}

// testCountBounds: past SEARCH_COUNT_LIMIT, count is PostgreSQL's
// estimate, at least the limit, and both doors say it is not exact (REST's
// X-Count-Exact, GraphQL's countExact); under it, count is exact and said
// so. Paging still visits every match.
func testCountBounds(t *testing.T, exact *server, w world) {
	settings := service.DefaultSearchSettings
	settings.CountLimit, settings.CountBudget = 50, time.Minute
	s := serverOver(t, exact.db, serverOptions{search: &settings})
	sp := 0
	for _, o := range w.offices {
		if o.Address.State == "SP" {
			sp++
		}
	}
	if sp <= 50 {
		t.Fatalf("the generated registry has %d offices in SP; the test needs more than 50", sp)
	}
	for _, c := range []struct {
		query string
		exact bool
	}{{"address.state.in=SP", false}, {"address.state.in=SP&head.eq=true&mainActivity.id.in=" + strconv.Itoa(w.offices[0].MainActivity.ID), true}} {
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/office?limit=5&"+c.query, nil))
		var p struct{ Count int }
		if err := json.NewDecoder(rec.Body).Decode(&p); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %v", c.query, rec.Code, err)
		}
		if got := rec.Header().Get("X-Count-Exact"); got != strconv.FormatBool(c.exact) {
			t.Errorf("%s: X-Count-Exact %q", c.query, got)
		}
		f := gqlFilter(t, c.query, intField)
		r := s.post(t, `query($f: OfficeFilter!) { searchOffices(filter: $f) { totalCount countExact } }`, map[string]any{"f": f})
		conn := r.Data["searchOffices"].(map[string]any)
		if conn["countExact"] != c.exact || num(conn["totalCount"]) != p.Count {
			t.Errorf("%s: GraphQL %v, REST count %d", c.query, conn, p.Count)
		}
		if c.exact {
			continue
		}
		if p.Count < 50 {
			t.Errorf("%s: count %d, below the limit it passed", c.query, p.Count)
		}
		if keys, _ := s.walk(t, "/office", c.query, "taxId", 100); len(keys) != sp {
			t.Errorf("%s: paging visited %d offices, want %d", c.query, len(keys), sp)
		}
	}
}

func loadWorld(t *testing.T, d *sqlx.DB) world {
	t.Helper()
	ctx := context.Background()
	store := db.NewStore(d, db.StoreOptions{})
	var taxIDs, personIDs []string
	if err := d.Select(&taxIDs, `SELECT tax_id FROM cnpj.offices ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	if err := d.Select(&personIDs, `SELECT id FROM cnpj.persons ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	offices, err := store.Offices(ctx, taxIDs)
	if err != nil {
		t.Fatal(err)
	}
	persons, err := store.Persons(ctx, personIDs)
	if err != nil {
		t.Fatal(err)
	}
	var w world
	for _, id := range taxIDs {
		w.offices = append(w.offices, offices[id])
	}
	for _, id := range personIDs {
		w.persons = append(w.persons, persons[id])
	}
	return w
}

// hasWords: every word of the value occurs among the name's words.
func hasWords(name, value string) bool {
	have := words.Of(name)
	for _, w := range words.Of(value) {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func alias(o model.Office) string {
	if o.Alias == nil {
		return ""
	}
	return *o.Alias
}

func dateIn(d *time.Time, from, to string) bool {
	if d == nil {
		return false
	}
	s := d.Format(time.DateOnly)
	return (from == "" || s >= from) && (to == "" || s <= to)
}

func phoneIs(o model.Office, pred func(model.Phone) bool) bool {
	return slices.ContainsFunc(o.Phones, pred)
}

func emailDomain(o model.Office) string {
	if len(o.Emails) == 0 {
		return ""
	}
	return strings.ToLower(o.Emails[0].Domain)
}

func equityAtLeast(c *model.Company, min float64) bool {
	v, err := strconv.ParseFloat(c.Equity, 64)
	return err == nil && v >= min
}

type officeCase struct {
	query string
	want  func(o model.Office) bool
}

// officeCases builds a case for every office filter, its values picked
// from the data so that each expects a known, non-empty set.
func officeCases(t *testing.T, w world) []officeCase {
	t.Helper()
	pick := func(what string, pred func(o model.Office) bool) model.Office {
		for i := len(w.offices) / 3; i < len(w.offices)+len(w.offices)/3; i++ {
			if o := w.offices[i%len(w.offices)]; pred(o) {
				return o
			}
		}
		t.Fatalf("the generated dump has no office with %s", what)
		return model.Office{}
	}
	named := pick("a company name of 3 words", func(o model.Office) bool { return len(words.Of(o.Company.Name)) >= 3 })
	nameWords := words.Of(named.Company.Name)
	aliased := pick("an alias", func(o model.Office) bool { return len(words.Of(alias(o))) >= 2 })
	aliasWord := words.Of(alias(aliased))[0]
	otherState := "RJ" // a second state for a search of two
	if named.Address.State == otherState {
		otherState = "SP"
	}
	special := pick("a special situation", func(o model.Office) bool { return o.Special != nil })
	reason := pick("a reason", func(o model.Office) bool { return o.Reason != nil && o.Reason.ID != 0 })
	abroad := pick("an address abroad", func(o model.Office) bool { return o.Address.Country.ID != 76 && o.Address.Country.ID != 0 })
	muni := pick("a municipality", func(o model.Office) bool { return o.Address.Municipality != nil })
	withSide := pick("side activities", func(o model.Office) bool { return len(o.SideActivities) > 0 })
	withPhone := pick("a phone", func(o model.Office) bool { return len(o.Phones) > 0 })
	withEmail := pick("an e-mail", func(o model.Office) bool { return len(o.Emails) > 0 })
	withDetails := pick("address details", func(o model.Office) bool {
		return o.Address.Details != nil && len(words.Of(*o.Address.Details)) > 0
	})
	detailsWord := strings.ToUpper(words.Of(*withDetails.Address.Details)[0])
	streetWord := strings.ToUpper(words.Of(named.Address.Street)[len(words.Of(named.Address.Street))-1])
	zip := named.Address.Zip
	sp := func(o model.Office) bool { return o.Address.State == "SP" }
	ibge := *muni.Address.Municipality
	side := withSide.SideActivities[0].ID
	main := withSide.MainActivity.ID
	personal := slices.Contains(db.PersonalMailDomains, emailDomain(withEmail))
	_ = personal

	return []officeCase{
		{"names.in=" + nameWords[0], func(o model.Office) bool {
			return hasWords(o.Company.Name, nameWords[0]) || hasWords(alias(o), nameWords[0])
		}},
		{"names.in=" + url.QueryEscape(nameWords[1]+" "+strings.ToUpper(nameWords[2])) + "," + aliasWord, func(o model.Office) bool {
			v := nameWords[1] + " " + nameWords[2]
			return hasWords(o.Company.Name, v) || hasWords(alias(o), v) || hasWords(o.Company.Name, aliasWord) || hasWords(alias(o), aliasWord)
		}},
		// One value: read through the word tables (several words join
		// on the key), alone or merged with other filters' offices.
		{"names.in=" + url.QueryEscape(nameWords[1]+" "+nameWords[2]), func(o model.Office) bool {
			v := nameWords[1] + " " + nameWords[2]
			return hasWords(o.Company.Name, v) || hasWords(alias(o), v)
		}},
		{"names.in=" + nameWords[0] + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && (hasWords(o.Company.Name, nameWords[0]) || hasWords(alias(o), nameWords[0]))
		}},
		{"names.in=" + aliasWord + "&address.state.in=" + aliased.Address.State, func(o model.Office) bool {
			return o.Address.State == aliased.Address.State && (hasWords(o.Company.Name, aliasWord) || hasWords(alias(o), aliasWord))
		}},
		{"names.in=" + url.QueryEscape(nameWords[1]+" "+nameWords[2]) + "&address.state.in=" + named.Address.State + "," + otherState,
			func(o model.Office) bool {
				v := nameWords[1] + " " + nameWords[2]
				return (o.Address.State == named.Address.State || o.Address.State == otherState) && (hasWords(o.Company.Name, v) || hasWords(alias(o), v))
			}},
		{"names.in=" + aliasWord + "&company.simples.optant.eq=true&company.equity.gte=1", func(o model.Office) bool {
			return o.Company.Simples != nil && o.Company.Simples.Optant && equityAtLeast(o.Company, 1) &&
				(hasWords(o.Company.Name, aliasWord) || hasWords(alias(o), aliasWord))
		}},
		{"names.nin=" + nameWords[0] + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && !hasWords(o.Company.Name, nameWords[0]) && !hasWords(alias(o), nameWords[0])
		}},
		{"company.name.in=" + nameWords[0], func(o model.Office) bool { return hasWords(o.Company.Name, nameWords[0]) }},
		{"company.name.nin=" + nameWords[0] + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && !hasWords(o.Company.Name, nameWords[0])
		}},
		{"alias.in=" + aliasWord, func(o model.Office) bool { return hasWords(alias(o), aliasWord) }},
		{"alias.nin=" + aliasWord + "&address.state.in=SP", func(o model.Office) bool { return sp(o) && !hasWords(alias(o), aliasWord) }},
		{"company.equity.gte=100000&company.equity.lte=500000", func(o model.Office) bool {
			return equityAtLeast(o.Company, 100000) && !equityAtLeast(o.Company, 500000.000001)
		}},
		{"company.nature.id.in=2062,2240", func(o model.Office) bool { return o.Company.Nature.ID == 2062 || o.Company.Nature.ID == 2240 }},
		{"company.nature.id.nin=2135,2062&address.state.in=RJ", func(o model.Office) bool {
			return o.Address.State == "RJ" && o.Company.Nature.ID != 2135 && o.Company.Nature.ID != 2062
		}},
		{"company.size.id.in=3,5", func(o model.Office) bool {
			return o.Company.Size != nil && (o.Company.Size.ID == 3 || o.Company.Size.ID == 5)
		}},
		{"company.simples.optant.eq=true", func(o model.Office) bool { return o.Company.Simples != nil && o.Company.Simples.Optant }},
		{"company.simples.optant.eq=false&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && (o.Company.Simples == nil || !o.Company.Simples.Optant)
		}},
		{"company.simples.since.gte=2015-01-01&company.simples.since.lte=2019-12-31", func(o model.Office) bool {
			return o.Company.Simples != nil && dateIn(o.Company.Simples.Since, "2015-01-01", "2019-12-31")
		}},
		{"company.simei.optant.eq=true", func(o model.Office) bool { return o.Company.Simei != nil && o.Company.Simei.Optant }},
		{"company.simei.since.gte=2018-01-01", func(o model.Office) bool {
			return o.Company.Simei != nil && dateIn(o.Company.Simei.Since, "2018-01-01", "")
		}},
		{"address.state.in=SP&taxId.nin=" + named.TaxID + "," + muni.TaxID, func(o model.Office) bool {
			return sp(o) && o.TaxID != named.TaxID && o.TaxID != muni.TaxID
		}},
		{"founded.gte=2000-01-01&founded.lte=2004-12-31", func(o model.Office) bool { return dateIn(o.Founded, "2000-01-01", "2004-12-31") }},
		{"head.eq=false", func(o model.Office) bool { return !o.Head }},
		{"statusDate.gte=2021-06-01", func(o model.Office) bool { return dateIn(o.StatusDate, "2021-06-01", "") }},
		{"status.id.in=3,4", func(o model.Office) bool { return o.Status.ID == 3 || o.Status.ID == 4 }},
		{"reason.id.in=" + strconv.Itoa(reason.Reason.ID), func(o model.Office) bool { return o.Reason != nil && o.Reason.ID == reason.Reason.ID }},
		{"specialDate.lte=" + special.SpecialDate.Format(time.DateOnly), func(o model.Office) bool {
			return dateIn(o.SpecialDate, "", special.SpecialDate.Format(time.DateOnly))
		}},
		{"special.id.in=" + strconv.Itoa(special.Special.ID), func(o model.Office) bool { return o.Special != nil && o.Special.ID == special.Special.ID }},
		{"address.municipality.in=" + strconv.Itoa(ibge), func(o model.Office) bool {
			return o.Address.Municipality != nil && *o.Address.Municipality == ibge
		}},
		{"address.municipality.nin=" + strconv.Itoa(ibge) + "&address.state.in=" + muni.Address.State, func(o model.Office) bool {
			return o.Address.State == muni.Address.State && (o.Address.Municipality == nil || *o.Address.Municipality != ibge)
		}},
		{"address.street.in=" + url.QueryEscape(strings.ToLower(streetWord)), func(o model.Office) bool {
			return strings.Contains(words.Upper(o.Address.Street), streetWord)
		}},
		{"address.street.nin=" + url.QueryEscape(streetWord) + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && !strings.Contains(words.Upper(o.Address.Street), streetWord)
		}},
		{"address.number.in=" + url.QueryEscape(named.Address.Number), func(o model.Office) bool {
			return strings.EqualFold(o.Address.Number, named.Address.Number)
		}},
		{"address.details.in=" + url.QueryEscape(detailsWord), func(o model.Office) bool {
			return o.Address.Details != nil && strings.Contains(words.Upper(*o.Address.Details), detailsWord)
		}},
		{"address.district.in=centro&address.state.in=MG", func(o model.Office) bool {
			return o.Address.State == "MG" && strings.Contains(words.Upper(o.Address.District), "CENTRO")
		}},
		{"address.state.in=SP,RJ", func(o model.Office) bool { return o.Address.State == "SP" || o.Address.State == "RJ" }},
		{"address.zip.in=" + zip, func(o model.Office) bool { return o.Address.Zip == zip }},
		{"address.zip.gte=20000000&address.zip.lte=28999999", func(o model.Office) bool {
			return o.Address.Zip >= "20000000" && o.Address.Zip <= "28999999"
		}},
		{"address.country.id.in=" + strconv.Itoa(abroad.Address.Country.ID), func(o model.Office) bool {
			return o.Address.Country.ID == abroad.Address.Country.ID
		}},
		{"address.country.id.nin=76", func(o model.Office) bool { return o.Address.Country.ID != 76 }},
		{"phones.ex=false&address.state.in=SP", func(o model.Office) bool { return sp(o) && len(o.Phones) == 0 }},
		{"phones.ex=true&address.state.in=RJ", func(o model.Office) bool { return o.Address.State == "RJ" && len(o.Phones) > 0 }},
		{"phones.type.in=MOBILE", func(o model.Office) bool {
			return phoneIs(o, func(p model.Phone) bool { return db.PhoneType(p.Number) == "MOBILE" })
		}},
		{"phones.type.in=LANDLINE&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && phoneIs(o, func(p model.Phone) bool { return db.PhoneType(p.Number) == "LANDLINE" })
		}},
		{"phones.area.in=" + withPhone.Phones[0].Area, func(o model.Office) bool {
			return phoneIs(o, func(p model.Phone) bool {
				n, _ := strconv.Atoi(p.Area)
				return strconv.Itoa(n) == withPhone.Phones[0].Area
			})
		}},
		{"phones.area.gte=80", func(o model.Office) bool {
			return phoneIs(o, func(p model.Phone) bool { n, err := strconv.Atoi(p.Area); return err == nil && n >= 80 })
		}},
		{"phones.number.in=" + withPhone.Phones[0].Number, func(o model.Office) bool {
			return phoneIs(o, func(p model.Phone) bool { return p.Number == withPhone.Phones[0].Number })
		}},
		{"emails.ex=true&address.state.in=SP", func(o model.Office) bool { return sp(o) && len(o.Emails) > 0 }},
		{"emails.ownership.in=PERSONAL", func(o model.Office) bool {
			return len(o.Emails) > 0 && db.EmailOwnership(emailDomain(o)) == "PERSONAL"
		}},
		{"emails.ownership.in=CORPORATE,ACCOUNTING&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && len(o.Emails) > 0 && db.EmailOwnership(emailDomain(o)) != "PERSONAL"
		}},
		{"emails.address.in=" + url.QueryEscape(strings.ToUpper(withEmail.Emails[0].Address)), func(o model.Office) bool {
			return len(o.Emails) > 0 && strings.EqualFold(o.Emails[0].Address, withEmail.Emails[0].Address)
		}},
		{"emails.domain.in=" + emailDomain(withEmail), func(o model.Office) bool { return emailDomain(o) == emailDomain(withEmail) }},
		{"emails.domain.nin=" + emailDomain(withEmail) + "&emails.ex=true&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && len(o.Emails) > 0 && emailDomain(o) != emailDomain(withEmail)
		}},
		{"mainActivity.id.in=" + strconv.Itoa(main), func(o model.Office) bool { return o.MainActivity.ID == main }},
		{"mainActivity.id.nin=" + strconv.Itoa(main) + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && o.MainActivity.ID != main
		}},
		{"sideActivities.id.in=" + strconv.Itoa(side), func(o model.Office) bool {
			return slices.ContainsFunc(o.SideActivities, func(c model.Code) bool { return c.ID == side })
		}},
		{"sideActivities.id.nin=" + strconv.Itoa(side) + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && !slices.ContainsFunc(o.SideActivities, func(c model.Code) bool { return c.ID == side })
		}},
		{"activities.id.in=" + strconv.Itoa(side), func(o model.Office) bool {
			return o.MainActivity.ID == side || slices.ContainsFunc(o.SideActivities, func(c model.Code) bool { return c.ID == side })
		}},
		{"activities.id.nin=" + strconv.Itoa(side) + "&address.state.in=SP", func(o model.Office) bool {
			return sp(o) && o.MainActivity.ID != side && !slices.ContainsFunc(o.SideActivities, func(c model.Code) bool { return c.ID == side })
		}},
	}
}

// page is a decoded REST search page.
type searchPage struct {
	next    string
	limit   int
	count   int
	records []map[string]any
}

func (s *server) searchPage(t *testing.T, target string) searchPage {
	t.Helper()
	body := s.rest(t, target)
	if _, ok := body["records"]; !ok {
		t.Fatalf("GET %s: %v", target, body)
	}
	p := searchPage{limit: num(body["limit"]), count: num(body["count"])}
	// The contract's four fields, next a token or null on the last page.
	next, ok := body["next"]
	if token, _ := next.(string); len(body) != 4 || !ok || (next != nil && len(token) != 32) {
		t.Fatalf("GET %s: want next (a token or null), limit, count and records; got %v", target, body)
	}
	if n, ok := next.(string); ok {
		p.next = n
	}
	for _, r := range body["records"].([]any) {
		p.records = append(p.records, r.(map[string]any))
	}
	return p
}

func num(v any) int {
	n, _ := strconv.Atoi(fmt.Sprint(v))
	return n
}

// walk follows next from the first page of route?query to the end and
// returns the keys visited, failing on a key seen twice.
func (s *server) walk(t *testing.T, route, query, key string, limit int) (keys []string, count int) {
	t.Helper()
	target := route + "?" + query + "&limit=" + strconv.Itoa(limit)
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		p := s.searchPage(t, target)
		if pages == 0 {
			count = p.count
		} else if p.count != count {
			t.Errorf("%s: count %d on page %d, %d on the first", query, p.count, pages+1, count)
		}
		if len(p.records) > limit || p.limit != limit {
			t.Fatalf("%s: %d records, limit %d, want at most %d", query, len(p.records), p.limit, limit)
		}
		for _, r := range p.records {
			k := fmt.Sprint(r[key])
			if seen[k] {
				t.Fatalf("%s: %s visited twice", query, k)
			}
			seen[k] = true
			keys = append(keys, k)
		}
		if p.next == "" {
			return keys, count
		}
		if len(p.next) != 32 {
			t.Fatalf("%s: next %q is not 32 characters", query, p.next)
		}
		target = route + "?token=" + p.next
	}
}

// testOfficeFilters: every office filter, on a generated dump, gives
// exactly the offices the oracle expects, in tax id order, each once across
// pages, with an exact count.
func testOfficeFilters(t *testing.T, s *server, w world) {
	for _, c := range officeCases(t, w) {
		var want []string
		for _, o := range w.offices {
			if c.want(o) {
				want = append(want, o.TaxID)
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: the oracle expects nothing; pick another value", c.query)
			continue
		}
		got, count := s.walk(t, "/office", c.query, "taxId", 1000)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d offices, want %d\n got %v\nwant %v", c.query, len(got), len(want), head(got), head(want))
		}
		if count != len(want) {
			t.Errorf("%s: count %d, want %d", c.query, count, len(want))
		}
		// Names read the alias by a walk of 2,000 offices, then collect
		// the matches after them: small pages cross that edge.
		if strings.HasPrefix(c.query, "names.in=") {
			if got, _ := s.walk(t, "/office", c.query, "taxId", 7); !slices.Equal(got, want) {
				t.Errorf("%s, pages of 7: %d offices, want %d", c.query, len(got), len(want))
			}
		}
	}
}

func (s *server) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

func head(s []string) []string { return s[:min(len(s), 8)] }

type personCase struct {
	query string
	want  func(p model.Person) bool
}

// testPersonFilters: every person filter against the oracle.
func testPersonFilters(t *testing.T, s *server, w world) {
	var named, cpf, foreign model.Person
	for _, p := range w.persons[len(w.persons)/2:] {
		switch {
		case named.ID == "" && len(words.Of(p.Name)) >= 2 && p.Type == "NATURAL":
			named = p
		case cpf.ID == "" && p.TaxID != nil && strings.HasPrefix(*p.TaxID, "***"):
			cpf = p
		case foreign.ID == "" && p.Country != nil && p.Country.ID != 0:
			foreign = p
		}
	}
	if named.ID == "" || cpf.ID == "" || foreign.ID == "" {
		t.Fatal("the generated dump lacks a named, a CPF or a foreign person")
	}
	nameWords := words.Of(named.Name)
	middle := (*cpf.TaxID)[3:9]
	fullCPF := "123" + middle + "45" // any CPF with those visible digits
	for _, c := range []personCase{
		{"type.in=LEGAL,FOREIGN", func(p model.Person) bool { return p.Type == "LEGAL" || p.Type == "FOREIGN" }},
		{"name.in=" + url.QueryEscape(nameWords[0]+" "+nameWords[1]), func(p model.Person) bool {
			return hasWords(p.Name, nameWords[0]+" "+nameWords[1])
		}},
		{"name.in=" + nameWords[1] + "&type.in=NATURAL", func(p model.Person) bool { return p.Type == "NATURAL" && hasWords(p.Name, nameWords[1]) }},
		{"name.in=" + nameWords[0], func(p model.Person) bool { return hasWords(p.Name, nameWords[0]) }},
		{"name.in=" + nameWords[0] + "," + nameWords[1], func(p model.Person) bool {
			return hasWords(p.Name, nameWords[0]) || hasWords(p.Name, nameWords[1])
		}},
		{"name.nin=" + nameWords[1] + "&type.in=LEGAL", func(p model.Person) bool { return p.Type == "LEGAL" && !hasWords(p.Name, nameWords[1]) }},
		{"taxId.in=" + fullCPF, func(p model.Person) bool { return p.TaxID != nil && *p.TaxID == *cpf.TaxID }},
		{"age.in=21-30,81%2B", func(p model.Person) bool { return p.Age != nil && (*p.Age == "21-30" || *p.Age == "81+") }},
		{"country.id.in=" + strconv.Itoa(foreign.Country.ID), func(p model.Person) bool {
			return p.Country != nil && p.Country.ID == foreign.Country.ID
		}},
		{"country.id.nin=" + strconv.Itoa(foreign.Country.ID) + "&type.in=FOREIGN", func(p model.Person) bool {
			return p.Type == "FOREIGN" && (p.Country == nil || p.Country.ID != foreign.Country.ID)
		}},
	} {
		var want []string
		for _, p := range w.persons {
			if c.want(p) {
				want = append(want, p.ID)
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: the oracle expects nothing", c.query)
			continue
		}
		got, count := s.walk(t, "/person", c.query, "id", 1000)
		if !slices.Equal(got, want) || count != len(want) {
			t.Errorf("%s: %d persons (count %d), want %d\n got %v\nwant %v", c.query, len(got), count, len(want), head(got), head(want))
		}
	}
}

// gqlFilter turns GET /office's parameters into the GraphQL filter they
// mirror: address.state.in=SP,RJ → {address: {state: {in: ["SP","RJ"]}}}.
func gqlFilter(t *testing.T, query string, list func(name string) bool) map[string]any {
	t.Helper()
	values, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for name, vs := range values {
		parts := strings.Split(name, ".")
		m := out
		for _, p := range parts[:len(parts)-1] {
			if m[p] == nil {
				m[p] = map[string]any{}
			}
			m = m[p].(map[string]any)
		}
		op := parts[len(parts)-1]
		items := strings.Split(vs[0], ",")
		switch {
		case op == "in" || op == "nin":
			var l []any
			for _, it := range items {
				if n, err := strconv.Atoi(it); err == nil && list(name) {
					l = append(l, n)
				} else {
					l = append(l, it)
				}
			}
			m[op] = l
		case vs[0] == "true" || vs[0] == "false":
			m[op] = vs[0] == "true"
		default:
			if n, err := strconv.Atoi(vs[0]); err == nil && list(name) {
				m[op] = n
			} else if f, err := strconv.ParseFloat(vs[0], 64); err == nil && strings.HasPrefix(name, "company.equity") {
				m[op] = f
			} else {
				m[op] = vs[0]
			}
		}
	}
	return out
}

// intField: the GraphQL filter fields typed Int.
func intField(name string) bool {
	for _, p := range []string{".id.", "address.municipality.", "phones.area."} {
		if strings.Contains(name, p) || strings.HasPrefix(name, strings.TrimPrefix(p, ".")) {
			return true
		}
	}
	return false
}

// testSameThroughGraphQL: every office case gives the same records,
// in the same order, with the same count, through searchOffices; the
// second page through the cursor matches REST's next page.
func testSameThroughGraphQL(t *testing.T, s *server, w world) {
	const query = `query($f: OfficeFilter!, $after: String) { searchOffices(filter: $f, first: 5, after: $after) {
		totalCount countExact nodes { taxId company { name members { person { name } } } } pageInfo { hasNextPage endCursor } } }`
	for _, c := range officeCases(t, w) {
		rest := s.searchPage(t, "/office?"+c.query+"&limit=5")
		f := gqlFilter(t, c.query, intField)
		r := s.post(t, query, map[string]any{"f": f})
		if len(r.Errors) > 0 {
			t.Errorf("%s: %v", c.query, r.Errors)
			continue
		}
		conn := r.Data["searchOffices"].(map[string]any)
		if num(conn["totalCount"]) != rest.count || conn["countExact"] != true {
			t.Errorf("%s: totalCount %v, REST count %d", c.query, conn["totalCount"], rest.count)
		}
		var gql, rst []string
		for _, n := range conn["nodes"].([]any) {
			gql = append(gql, n.(map[string]any)["taxId"].(string))
		}
		for _, rec := range rest.records {
			rst = append(rst, rec["taxId"].(string))
		}
		if !slices.Equal(gql, rst) {
			t.Errorf("%s: GraphQL %v, REST %v", c.query, gql, rst)
		}
		info := conn["pageInfo"].(map[string]any)
		if (info["hasNextPage"] == true) != (rest.next != "") {
			t.Errorf("%s: hasNextPage %v, REST next %q", c.query, info["hasNextPage"], rest.next)
		}
		if rest.next == "" {
			continue
		}
		r2 := s.post(t, query, map[string]any{"f": f, "after": info["endCursor"]})
		rest2 := s.searchPage(t, "/office?token="+rest.next)
		var gql2, rst2 []string
		for _, n := range r2.Data["searchOffices"].(map[string]any)["nodes"].([]any) {
			gql2 = append(gql2, n.(map[string]any)["taxId"].(string))
		}
		for _, rec := range rest2.records {
			rst2 = append(rst2, rec["taxId"].(string))
		}
		if !slices.Equal(gql2, rst2) || len(rst2) == 0 {
			t.Errorf("%s: second page GraphQL %v, REST %v", c.query, gql2, rst2)
		}
	}
}

// testEdgeCursors: each edge of a page has a cursor of its own, and the
// page after any of them starts with the match after its node, as REST's
// order has them; the count stays the search's.
func testEdgeCursors(t *testing.T, s *server) {
	for _, c := range []struct{ field, filter, key, rest string }{
		{"searchOffices", `{address: {state: {in: ["SP"]}}}`, "taxId", "/office?address.state.in=SP&limit=30"},
		{"searchPersons", `{type: {in: ["NATURAL"]}}`, "id", "/person?type.in=NATURAL&limit=30"},
	} {
		rest := s.searchPage(t, c.rest)
		var want []string
		for _, rec := range rest.records {
			want = append(want, rec[c.key].(string))
		}
		if len(want) < 10 {
			t.Fatalf("%s: %d matches, want a search of 10 or more", c.rest, len(want))
		}
		page := func(after any) (keys, cursors []string, total int) {
			t.Helper()
			r := s.post(t, `query($after: String) { `+c.field+`(filter: `+c.filter+`, first: 4, after: $after) {
				totalCount edges { cursor node { `+c.key+` } } pageInfo { hasPreviousPage startCursor endCursor } } }`,
				map[string]any{"after": after})
			r.ok(t)
			conn := r.Data[c.field].(map[string]any)
			for _, e := range conn["edges"].([]any) {
				e := e.(map[string]any)
				keys = append(keys, e["node"].(map[string]any)[c.key].(string))
				cursors = append(cursors, e["cursor"].(string))
			}
			// pageInfo as Relay's connections have it: the first and last
			// edges' cursors, and whether the page was asked after one.
			info := conn["pageInfo"].(map[string]any)
			if info["startCursor"] != cursors[0] || info["endCursor"] != cursors[len(cursors)-1] || info["hasPreviousPage"] != (after != nil) {
				t.Errorf("%s after %v: pageInfo %v, edges' cursors %v", c.field, after, info, cursors)
			}
			return keys, cursors, num(conn["totalCount"])
		}
		keys, cursors, total := page(nil)
		if !slices.Equal(keys, want[:4]) || total != rest.count {
			t.Fatalf("%s: first page %v (count %d), REST %v (count %d)", c.field, keys, total, want[:4], rest.count)
		}
		seen := map[string]bool{}
		for i, cursor := range cursors {
			if len(cursor) != 32 || seen[cursor] {
				t.Errorf("%s: edge %d's cursor %q: want 32 characters, one per edge", c.field, i, cursor)
			}
			seen[cursor] = true
			after, _, total := page(cursor)
			if !slices.Equal(after, want[i+1:i+5]) || total != rest.count {
				t.Errorf("%s: after edge %d: %v (count %d), want %v (count %d)", c.field, i, after, total, want[i+1:i+5], rest.count)
			}
		}
		// startCursor without the edges is still the first record's cursor:
		// the page after it starts with the second match.
		r := s.post(t, `{ `+c.field+`(filter: `+c.filter+`, first: 4) { pageInfo { startCursor } } }`, nil)
		r.ok(t)
		start := r.Data[c.field].(map[string]any)["pageInfo"].(map[string]any)["startCursor"]
		if start, ok := start.(string); !ok || len(start) != 32 {
			t.Fatalf("%s: startCursor %v without edges", c.field, start)
		}
		if after, _, _ := page(start); !slices.Equal(after, want[1:5]) {
			t.Errorf("%s: after startCursor: %v, want %v", c.field, after, want[1:5])
		}
	}
}

// testRecordsAreLookups: an office search's records are the office
// lookup's answers without Simples (company.simples, company.simei) and
// registrations, members included: a page of offices of companies with
// and without members, some sharing a company. A person search's records
// are the person lookup's answers.
func testRecordsAreLookups(t *testing.T, s *server) {
	page := s.searchPage(t, "/office?address.state.in=SP&limit=1000")
	if len(page.records) < 100 {
		t.Fatalf("%d records, want a page of at least 100", len(page.records))
	}
	shared, withMembers := 0, 0
	roots := map[string]bool{}
	for _, rec := range page.records {
		lookup := s.rest(t, "/office/"+rec["taxId"].(string))
		company := lookup["company"].(map[string]any)
		delete(company, "simples")
		delete(company, "simei")
		delete(lookup, "registrations")
		if !reflect.DeepEqual(rec, lookup) {
			t.Fatalf("record %s differs from its lookup:\n record %v\n lookup %v", rec["taxId"], rec, lookup)
		}
		if root := fmt.Sprint(company["id"]); roots[root] {
			shared++
		} else {
			roots[root] = true
		}
		if len(company["members"].([]any)) > 0 {
			withMembers++
		}
	}
	if shared == 0 || withMembers == 0 || withMembers == len(page.records) {
		t.Fatalf("the page has %d offices of a company already in it and %d of %d with members: pick another page",
			shared, withMembers, len(page.records))
	}

	// A person search's records are the person lookup's answers, the
	// memberships (each with its company) in the lookup's order: a page
	// with persons of several memberships.
	persons := s.searchPage(t, "/person?limit=1000")
	several := 0
	for _, rec := range persons.records {
		lookup := s.rest(t, "/person/"+rec["id"].(string))
		if !reflect.DeepEqual(rec, lookup) {
			t.Fatalf("person record %s differs from its lookup:\n record %v\n lookup %v", rec["id"], rec, lookup)
		}
		if len(lookup["membership"].([]any)) > 1 {
			several++
		}
	}
	if len(persons.records) < 100 || several == 0 {
		t.Fatalf("%d person records, %d of several memberships: want a page of at least 100 with some", len(persons.records), several)
	}
}

// testTokens: a token alone, well formed, known, of this search kind and of
// the live snapshot; anything else is a 400 with a sentence.
func testTokens(t *testing.T, s *server) {
	first := s.searchPage(t, "/office?address.state.in=SP&limit=3")
	if first.next == "" {
		t.Fatal("no second page")
	}
	for target, sentence := range map[string]string{
		"/office?token=" + first.next + "&limit=3":             "token must not be combined with any other parameter",
		"/office?token=" + first.next + "&address.state.in=RJ": "token must not be combined with any other parameter",
		"/office?token=abc":                                     "token must be the 32-character next token of a previous page",
		"/office?token=" + strings.Repeat("0", 32):              "token is unknown or has expired: start the search again without it",
		"/person?token=" + first.next:                           "token is unknown or has expired: start the search again without it",
		"/office?limit=0":                                       "limit must be an integer from 1 to 1000",
		"/office?limit=1001":                                    "limit must be an integer from 1 to 1000",
		"/office?limit=ten":                                     "limit must be an integer from 1 to 1000",
		"/office?state=SP":                                      "state is not a parameter of this search",
		"/office?address.state.gte=SP":                          "address.state.gte is not a parameter of this search",
		"/office?founded.gte=2020-02-30":                        "founded.gte must be a date in the format YYYY-MM-DD",
		"/office?head.eq=yes":                                   "head.eq must be true or false",
		"/office?company.equity.gte=1e9":                        "company.equity.gte must be a decimal number, such as 100000 or 2500.50",
		"/office?address.zip.in=7000":                           "address.zip.in must contain only postal codes of 8 digits",
		"/office?taxId.nin=123":                                 "taxId.nin must contain only valid CNPJs",
		"/office?names.in=%2B%2B":                               "names.in values must each contain a letter or a digit",
		"/office?founded.gte=2020-01-01,2021-01-01":             "founded.gte must be a single value",
		"/office?founded.gte=2020-01-01&founded.gte=2020-01-01": "founded.gte must be a single value",
		"/office?address.state.in=SP&limit=3&limit=3":           "limit must be given only once",
		"/office?phones.type.in=FAX":                            "phones.type.in must contain only: LANDLINE, MOBILE",
		"/person?taxId.in=123":                                  "taxId.in must contain only CPFs (11 digits, or masked as ***123456**) or CNPJs",
		"/person?address.state.in=SP":                           "address.state.in is not a parameter of this search",
	} {
		body := s.restError(t, target)
		cs, _ := body["constraints"].([]any)
		if num(body["code"]) != 400 || !slices.Contains(cs, any(sentence)) {
			t.Errorf("GET %s: %v, want 400 %q", target, body, sentence)
		}
	}
	// A list filter repeated is the list comma-joined, as for the lookups'
	// lists (Python's requests, for one, repeats a list's parameter).
	joined, repeated := s.searchPage(t, "/office?address.state.in=SP,RJ&limit=50"), s.searchPage(t, "/office?address.state.in=SP&address.state.in=RJ&limit=50")
	if joined.count != repeated.count || !reflect.DeepEqual(joined.records, repeated.records) || len(joined.records) != 50 {
		t.Errorf("address.state.in repeated: count %d, %d records; comma-joined: count %d", repeated.count, len(repeated.records), joined.count)
	}
	// The token still works after the misuses, and gives the next page.
	second := s.searchPage(t, "/office?token="+first.next)
	if len(second.records) != 3 || second.records[0]["taxId"] == first.records[2]["taxId"] {
		t.Errorf("second page: %v", second.records)
	}
	// A token of a snapshot that is no longer live has expired.
	dbtest.MustExec(t, s.db, `UPDATE search_tokens SET snapshot_id = snapshot_id - 1 WHERE token = $1`, second.next)
	body := s.restError(t, "/office?token="+second.next)
	if cs, _ := body["constraints"].([]any); num(body["code"]) != 400 ||
		!slices.Contains(cs, any("token has expired: the registry was updated since the search began; start it again without token")) {
		t.Errorf("token of another snapshot: %v", body)
	}
	// So has one older than SEARCH_TOKEN_TTL.
	dbtest.MustExec(t, s.db, `UPDATE search_tokens SET created_at = now() - interval '2 hours' WHERE token = $1`, first.next)
	body = s.restError(t, "/office?token="+first.next)
	if cs, _ := body["constraints"].([]any); !slices.Contains(cs, any("token is unknown or has expired: start the search again without it")) {
		t.Errorf("old token: %v", body)
	}
}

// restError GETs a route that must fail and decodes its error body.
func (s *server) restError(t *testing.T, target string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	var m map[string]any
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || rec.Code == http.StatusOK {
		t.Fatalf("%s: %d %v", target, rec.Code, err)
	}
	return m
}

// testPaging: small pages through a whole result visit every match once,
// in order, whatever the page size.
func testPaging(t *testing.T, s *server, w world) {
	var want []string
	for _, o := range w.offices {
		if o.Address.State == "RJ" {
			want = append(want, o.TaxID)
		}
	}
	for _, limit := range []int{1, 7, len(want), len(want) + 1} {
		got, count := s.walk(t, "/office", "address.state.in=RJ", "taxId", limit)
		if !slices.Equal(got, want) || count != len(want) {
			t.Errorf("limit %d: %d offices (count %d), want %d", limit, len(got), count, len(want))
		}
	}
	// A Simples filter joins the Simples rows, bounded by the page's key in
	// the join: an office whose company has no row is still "not optant"
	// on every page.
	want = want[:0]
	for _, o := range w.offices {
		if o.Address.State == "RJ" && (o.Company.Simples == nil || !o.Company.Simples.Optant) {
			want = append(want, o.TaxID)
		}
	}
	var withoutRow int
	if err := s.db.Get(&withoutRow, `SELECT count(*) FROM cnpj.offices o LEFT JOIN cnpj.simples r ON r.root = o.root
		WHERE o.state = 'RJ' AND r.root IS NULL`); err != nil || withoutRow == 0 || withoutRow == len(want) {
		t.Fatalf("the world's RJ offices not in the Simples: %d of %d without a row (%v), want some of each", withoutRow, len(want), err)
	}
	for _, limit := range []int{1, 7} {
		got, count := s.walk(t, "/office", "company.simples.optant.eq=false&address.state.in=RJ", "taxId", limit)
		if !slices.Equal(got, want) || count != len(want) {
			t.Errorf("Simples, limit %d: %d offices (count %d), want %d", limit, len(got), count, len(want))
		}
	}
	var persons []string
	for _, p := range w.persons {
		if p.Type == "LEGAL" {
			persons = append(persons, p.ID)
		}
	}
	got, count := s.walk(t, "/person", "type.in=LEGAL", "id", 9)
	if !slices.Equal(got, persons) || count != len(persons) {
		t.Errorf("persons: %d (count %d), want %d", len(got), count, len(persons))
	}
}

// TestSearchRealSample: names match by words, case and accents aside, on
// the real registry rows of SERPRO and Open Knowledge Brasil.
func TestSearchRealSample(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dbtest.ImportSample(t, d)
	s, w := serverOver(t, d, serverOptions{}), loadWorld(t, d)
	serpro := func(o model.Office) bool { return strings.Contains(o.Company.Name, "SERPRO") }
	var ref model.Office
	for _, o := range w.offices {
		if serpro(o) {
			ref = o
		}
	}
	if ref.TaxID == "" {
		t.Fatal("the sample has no SERPRO office")
	}
	for _, c := range []officeCase{
		{"names.in=serpro", serpro},
		{"names.in=Processamento%20DADOS", serpro},
		{"names.in=servi%C3%A7o%20federal", serpro}, // "serviço": the accent does not matter
		{"names.in=proc", func(model.Office) bool { return false }},
		{"names.nin=serpro", func(o model.Office) bool { return !serpro(o) }},
		{"address.state.in=" + ref.Address.State, func(o model.Office) bool { return o.Address.State == ref.Address.State }},
		{"mainActivity.id.in=" + strconv.Itoa(ref.MainActivity.ID), func(o model.Office) bool { return o.MainActivity.ID == ref.MainActivity.ID }},
		{"address.municipality.in=" + strconv.Itoa(*ref.Address.Municipality), func(o model.Office) bool {
			return o.Address.Municipality != nil && *o.Address.Municipality == *ref.Address.Municipality
		}},
	} {
		want := []string{}
		for _, o := range w.offices {
			if c.want(o) {
				want = append(want, o.TaxID)
			}
		}
		got, count := s.walk(t, "/office", c.query, "taxId", 3)
		if !slices.Equal(got, want) || count != len(want) {
			t.Errorf("%s: %v (count %d), want %v", c.query, got, count, want)
		}
	}
	if n := len(w.persons); n == 0 {
		t.Fatal("the sample has no persons")
	}
	p := w.persons[len(w.persons)/2]
	word := words.Of(p.Name)[0]
	var want []string
	for _, q := range w.persons {
		if hasWords(q.Name, word) {
			want = append(want, q.ID)
		}
	}
	got, count := s.walk(t, "/person", "name.in="+strings.ToLower(word), "id", 2)
	if !slices.Equal(got, want) || count != len(want) {
		t.Errorf("name.in=%s: %v (count %d), want %v", word, got, count, want)
	}
}
