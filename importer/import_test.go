package importer_test

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
	"github.com/cnpjgraph/cnpjgraph/words"
)

func opts(t testing.TB, paths ...string) importer.Options {
	return importer.Options{Paths: paths, Municipalities: tabmun(t), Countries: countriesFile(t), DumpMonth: "2026-01"}
}

// generated writes a generated dump into a new temporary directory.
func generated(t *testing.T, o generator.Options) string {
	t.Helper()
	o.Out = t.TempDir()
	if _, err := generator.Generate(o); err != nil {
		t.Fatal(err)
	}
	return o.Out
}

func mustImport(t testing.TB, d *sqlx.DB, o importer.Options) db.Snapshot {
	t.Helper()
	snap, err := importer.Import(context.Background(), d, o)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	assertFolded(t, d)
	return snap
}

// assertFolded: the live snapshot's companies hold their Simples and
// members as the tables say (db.FoldMismatchesSQL).
func assertFolded(t testing.TB, d *sqlx.DB) {
	t.Helper()
	ctx := context.Background()
	c, err := d.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mismatches int
	if _, err := c.ExecContext(ctx, "SET search_path TO "+db.LiveSchema); err != nil {
		t.Fatal(err)
	}
	if err := c.GetContext(ctx, &mismatches, db.FoldMismatchesSQL); err != nil {
		t.Fatal(err)
	}
	if mismatches != 0 {
		t.Errorf("folded companies: %d differ from their members and Simples", mismatches)
	}
	_, _ = c.ExecContext(ctx, "RESET search_path")
}

func TestSampleSERPRO(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	var progress bytes.Buffer
	o := opts(t, sampleDir(t))
	o.DumpMonth = ""
	o.Progress = &progress
	snap := mustImport(t, d, o)
	if snap.State != "live" || !strings.HasPrefix(snap.DumpMonth, "20") {
		t.Errorf("snapshot %+v", snap)
	}
	for _, phase := range []string{"phase load", "phase derive and index", "phase primary keys", "phase vacuum and analyze", "phase swap", "loaded Socios0.zip: 7 rows"} {
		if !strings.Contains(progress.String(), phase) {
			t.Errorf("progress lacks %q:\n%s", phase, progress.String())
		}
	}

	var c struct {
		Name, Nature, ResponsibleRole, Equity, Size string
		Jurisdiction                                sql.NullString
	}
	if err := d.QueryRow(`SELECT name, nature, responsible_role, equity::text, size, jurisdiction FROM cnpj.companies WHERE root = '33683111'`).
		Scan(&c.Name, &c.Nature, &c.ResponsibleRole, &c.Equity, &c.Size, &c.Jurisdiction); err != nil {
		t.Fatal(err)
	}
	if c.Name != "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)" || c.Nature != "2011" || c.ResponsibleRole != "16" ||
		c.Equity != "1061004829.23" || c.Size != "05" || c.Jurisdiction.Valid {
		t.Errorf("company: %+v", c)
	}

	var o2 struct {
		Root, Status, StatusDate, Reason, Founded, Main, Side, Street, Number, Details, District, Zip, State, Muni string
		Head                                                                                                       bool
		Alias                                                                                                      string
		Nulls                                                                                                      int
		IBGE                                                                                                       int
		MuniState                                                                                                  string
	}
	err := d.QueryRow(`SELECT o.root, o.head, o.alias, o.status, o.status_date::text, o.reason, o.founded::text, o.main_activity,
			array_to_string(o.side_activities, ','), o.street, o.number, o.details, o.district, o.zip, o.state, o.municipality,
			num_nulls(o.city_abroad, o.country, o.phones, o.email, o.special, o.special_date), m.ibge, m.state
		FROM cnpj.offices o JOIN cnpj.municipalities m ON m.code = o.municipality WHERE o.tax_id = '33683111000280'`).
		Scan(&o2.Root, &o2.Head, &o2.Alias, &o2.Status, &o2.StatusDate, &o2.Reason, &o2.Founded, &o2.Main, &o2.Side, &o2.Street,
			&o2.Number, &o2.Details, &o2.District, &o2.Zip, &o2.State, &o2.Muni, &o2.Nulls, &o2.IBGE, &o2.MuniState)
	if err != nil {
		t.Fatal(err)
	}
	want := o2
	want.Root, want.Head, want.Alias, want.Status, want.StatusDate, want.Reason = "33683111", false, "REGIONAL BRASILIA-DF", "02", "2004-05-22", "00"
	want.Founded, want.Main, want.Side = "1967-06-30", "6204000", "6201501,6202300,6203100,6209100,6311900"
	want.Street, want.Number, want.Details, want.District, want.Zip, want.State, want.Muni = "AVENIDA L2 SGAN", "601", "MODULO G", "ASA NORTE", "70836900", "DF", "9701"
	want.Nulls, want.IBGE, want.MuniState = 6, 5300108, "DF"
	if o2 != want {
		t.Errorf("office:\n got %+v\nwant %+v", o2, want)
	}

	type member struct {
		Name, TaxID, Type, Role, Since, Age, ID string
	}
	wantMembers := []member{
		{"ANDRE DE CESERO", "***220050**", "NATURAL", "10", "2016-06-16", "6", ""},
		{"ANTONIO DE PADUA FERREIRA PASSOS", "***595901**", "NATURAL", "10", "2016-12-08", "7", ""},
		{"WILSON BIANCARDI COURY", "***414127**", "NATURAL", "10", "2019-06-18", "8", ""},
		{"GILENO GURJAO BARRETO", "***099595**", "NATURAL", "16", "2020-02-03", "5", ""},
		{"RICARDO CEZAR DE MOURA JUCA", "***989951**", "NATURAL", "10", "2020-05-12", "5", ""},
		{"ANTONINO DOS SANTOS GUERRA NETO", "***073447**", "NATURAL", "05", "2019-02-11", "7", ""},
	}
	var got []member
	rows, err := d.Query(`SELECT p.name, p.tax_id, p.type, m.role, m.since::text, p.age, p.id FROM cnpj.members m
		JOIN cnpj.persons p ON p.id = m.person_id WHERE m.root = '33683111' AND m.agent_person_id IS NULL AND m.agent_role IS NULL
		AND p.country IS NULL ORDER BY m.position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m member
		if err := rows.Scan(&m.Name, &m.TaxID, &m.Type, &m.Role, &m.Since, &m.Age, &m.ID); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantMembers) {
		t.Fatalf("members: %+v", got)
	}
	for i, w := range wantMembers {
		w.ID = cnpj.PersonID(cnpj.Natural, w.TaxID, w.Name)
		if got[i] != w {
			t.Errorf("member %d: got %+v want %+v", i, got[i], w)
		}
	}

	var s struct {
		Optant, Simei bool
		Since         string
		Nulls         int
	}
	if err := d.QueryRow(`SELECT simples_optant, simples_since::text, simei_optant, num_nulls(simples_until, simei_since, simei_until)
		FROM cnpj.simples WHERE root = '33683111'`).Scan(&s.Optant, &s.Since, &s.Simei, &s.Nulls); err != nil {
		t.Fatal(err)
	}
	if !s.Optant || s.Since != "2014-01-01" || s.Simei || s.Nulls != 3 {
		t.Errorf("simples: %+v", s)
	}
	var text string
	if err := d.Get(&text, `SELECT text FROM cnpj.activities WHERE code = '6204000'`); err != nil || text != "Consultoria em tecnologia da informação" {
		t.Errorf("activity text %q, %v", text, err)
	}
	var m49 int
	if err := d.Get(&m49, `SELECT m49 FROM cnpj.countries WHERE code = '105'`); err != nil || m49 != 76 {
		t.Errorf("Brasil m49 %d, %v", m49, err)
	}
	if err := d.Get(&text, `SELECT text FROM cnpj.roles WHERE code = '00'`); err != nil || text != "Não informada" {
		t.Errorf("role text %q, %v", text, err)
	}
}

// counts returns the row count of every snapshot table and a digest of its
// content, to compare two imports.
func digest(t testing.TB, d *sqlx.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range []string{"companies", "offices", "persons", "members", "simples", "simples_periods",
		"activities", "natures", "reasons", "roles", "countries", "municipalities"} {
		var s string
		if err := d.Get(&s, `SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') FROM cnpj.`+table+` x`); err != nil {
			t.Fatal(err)
		}
		out[table] = s
	}
	return out
}

func TestReimportIdenticalWhileReading(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	writeDump(t, dir, 8000)
	first := mustImport(t, d, opts(t, dir))
	before := digest(t, d)
	var persons int
	if err := d.Get(&persons, `SELECT count(*) FROM cnpj.persons`); err != nil || persons == 0 {
		t.Fatalf("persons %d %v", persons, err)
	}

	// Readers keep getting the first snapshot's answer during the second import.
	var wantAnswer string
	const q = `SELECT street || '/' || coalesce(array_to_string(phones, ','), '') FROM cnpj.offices WHERE tax_id = '10000010000100'`
	if err := d.Get(&wantAnswer, q); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var reads atomic.Int64
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var got string
			if err := d.Get(&got, q); err != nil || got != wantAnswer {
				readErr = errors.Join(err, errors.New("answer "+got))
				return
			}
			reads.Add(1)
		}
	}()
	second := mustImport(t, d, opts(t, dir))
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("reader during import: %v", readErr)
	}
	if reads.Load() < 10 {
		t.Errorf("only %d reads during the import", reads.Load())
	}
	after := digest(t, d)
	for table, s := range before {
		if after[table] != s {
			t.Errorf("%s differs after re-import: %s vs %s", table, s, after[table])
		}
	}
	if second.ID <= first.ID {
		t.Errorf("snapshot ids %d then %d", first.ID, second.ID)
	}
	var state string
	if err := d.Get(&state, `SELECT state FROM snapshots WHERE id = $1`, first.ID); err != nil || state != "retired" {
		t.Errorf("first snapshot is %q, %v", state, err)
	}
	var counts map[string]int64
	if err := json.Unmarshal(second.RowCounts, &counts); err != nil {
		t.Fatal(err)
	}
	if counts["companies"] != 8000 || counts["offices"] != 8800 || counts["members"] != 9760 || counts["simples"] != 5600 {
		t.Errorf("row counts %v", counts)
	}
	// Closed Simples periods: SIMPLES 2010-2015 on 20% of companies.
	if counts["persons"] != int64(persons) {
		t.Errorf("persons %d in row counts, %d in the table", counts["persons"], persons)
	}
	if counts["simples_periods"] != 1600 {
		t.Errorf("simples_periods %d", counts["simples_periods"])
	}

	var p struct {
		Type, Country string
		TaxID         sql.NullString
		Age           sql.NullString
	}
	if err := d.QueryRow(`SELECT p.type, p.tax_id, p.country, p.age FROM cnpj.persons p WHERE p.name = 'FOREIGN HOLDING INC'`).
		Scan(&p.Type, &p.TaxID, &p.Country, &p.Age); err != nil {
		t.Fatal(err)
	}
	if p.Type != "FOREIGN" || p.TaxID.Valid || p.Country != "249" || p.Age.Valid {
		t.Errorf("foreign person %+v", p)
	}
	var agent struct{ Type, TaxID, Name, Role string }
	if err := d.QueryRow(`SELECT a.type, a.tax_id, a.name, m.agent_role FROM cnpj.members m JOIN cnpj.persons a ON a.id = m.agent_person_id
		WHERE m.root = '10000005' LIMIT 1`).Scan(&agent.Type, &agent.TaxID, &agent.Name, &agent.Role); err != nil {
		t.Fatal(err)
	}
	if agent != (struct{ Type, TaxID, Name, Role string }{"NATURAL", "***123456**", "MARIA REPRESENTANTE", "05"}) {
		t.Errorf("agent %+v", agent)
	}
	var legal struct {
		TaxID string
		Age   sql.NullString
	}
	if err := d.QueryRow(`SELECT p.tax_id, p.age FROM cnpj.members m JOIN cnpj.persons p ON p.id = m.person_id
		WHERE m.root = '10000005' AND p.type = 'LEGAL'`).Scan(&legal.TaxID, &legal.Age); err != nil {
		t.Fatal(err)
	}
	if legal.TaxID != "10000006000100" || legal.Age.Valid {
		t.Errorf("legal person %+v", legal)
	}
	var special []string
	if err := d.Select(&special, `SELECT s.text || ':' || count(o.tax_id) FROM special_statuses s
		LEFT JOIN cnpj.offices o ON o.special = s.text GROUP BY s.id ORDER BY s.id`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(special, "|") != "EM LIQUIDAÇÃO:16|RECUPERACAO JUDICIAL:16" {
		t.Errorf("special statuses %q", special)
	}
	var zip, phones, name string
	if err := d.QueryRow(`SELECT zip, array_to_string(phones, ','), c.name FROM cnpj.offices o JOIN cnpj.companies c USING (root)
		WHERE tax_id = '10000001000100'`).Scan(&zip, &phones, &name); err != nil {
		t.Fatal(err)
	}
	if zip != "01234567" || phones != "11,33334444" || name != "EMPRESA NÚMERO 1 LTDA" {
		t.Errorf("zip %q phones %q name %q", zip, phones, name)
	}
}

func TestSimplesHistoryAccumulates(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	write := func(rows ...[]string) {
		z := newZip(t, dir, "Simples")
		for _, r := range rows {
			z.row(r...)
		}
		z.close(t)
	}
	emptyKinds(t, dir)
	write([]string{"00000001", "N", "20100101", "20121231", "N", "", ""})
	mustImport(t, d, opts(t, dir))
	write([]string{"00000001", "N", "20150101", "20161231", "S", "20170101", "20171231"})
	mustImport(t, d, opts(t, dir))
	var periods []string
	if err := d.Select(&periods, `SELECT regime || ' ' || since || ' ' || until FROM cnpj.simples_periods ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	want := "SIMEI 2017-01-01 2017-12-31|SIMPLES 2010-01-01 2012-12-31|SIMPLES 2015-01-01 2016-12-31"
	if strings.Join(periods, "|") != want {
		t.Errorf("periods %q", periods)
	}
}

func TestExtractedMemberNames(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	names := map[string]string{
		"Empresas1.zip": "K3241.K03200Y1.D61108.EMPRECSV", "Estabelecimentos0.zip": "K3241.K03200Y0.D61108.ESTABELE",
		"Socios0.zip": "K3241.K03200Y0.D61108.SOCIOCSV", "Simples.zip": "F.K03200$W.SIMPLES.CSV.D61108",
		"Cnaes.zip": "F.K03200$Z.D61108.CNAECSV", "Motivos.zip": "F.K03200$Z.D61108.MOTICSV",
		"Municipios.zip": "F.K03200$Z.D61108.MUNICCSV", "Naturezas.zip": "F.K03200$Z.D61108.NATJUCSV",
		"Paises.zip": "F.K03200$Z.D61108.PAISCSV", "Qualificacoes.zip": "F.K03200$Z.D61108.QUALSCSV",
	}
	for zipName, member := range names {
		z, err := zip.OpenReader(filepath.Join(sampleDir(t), zipName))
		if err != nil {
			t.Fatal(err)
		}
		r, err := z.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = z.Close()
		if err := os.WriteFile(filepath.Join(dir, member), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap := mustImport(t, d, opts(t, dir))
	var counts map[string]int64
	_ = json.Unmarshal(snap.RowCounts, &counts)
	if counts["companies"] != 1 || counts["offices"] != 1 || counts["members"] != 7 || counts["simples"] != 1 || counts["roles"] != 4 || counts["activities"] != 6 {
		t.Errorf("counts %v", counts)
	}
}

func TestConcurrentImportFailsFast(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	c, err := d.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(context.Background(), `SELECT pg_advisory_lock($1)`, int64(0x636e706a_696d7074)); err != nil {
		t.Fatal(err)
	}
	_, err = importer.Import(context.Background(), d, opts(t, sampleDir(t)))
	if !errors.Is(err, importer.ErrImportRunning) {
		t.Fatalf("got %v", err)
	}
}

func TestMissingMunicipalities(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	o := opts(t, sampleDir(t))
	o.Municipalities = ""
	_, err := importer.Import(context.Background(), d, o)
	if err == nil || !strings.Contains(err.Error(), "--municipalities") || !strings.Contains(err.Error(), "TABMUN.CSV") {
		t.Fatalf("got %v", err)
	}
}

// badDump copies the sample and lets edit change one ZIP's member.
func badDump(t *testing.T, zipName string, edit func([]byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(sampleDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(sampleDir(t), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == zipName {
			z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := z.File[0].Open()
			content, _ := io.ReadAll(r)
			w := newZip(t, dir, strings.TrimSuffix(zipName, ".zip"))
			w.raw(string(edit(content)))
			w.close(t)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func liveState(t *testing.T, d *sqlx.DB) (int64, int) {
	t.Helper()
	live, err := db.LiveSnapshot(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM cnpj.members`); err != nil {
		t.Fatal(err)
	}
	return live.ID, n
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	mustImport(t, d, opts(t, sampleDir(t)))
	liveID, members := liveState(t, d)
	addRow := func(row string) func([]byte) []byte {
		return func(b []byte) []byte { return append(b, row...) }
	}
	badColumns := addRow(`"33683111";"2";"SHORT ROW";"***111111**";"10"` + "\n")

	// One ZIP given for the month's folder: refused before anything is
	// loaded, the served registry untouched.
	t.Run("a kind missing", func(t *testing.T) {
		_, err := importer.Import(context.Background(), d, opts(t, filepath.Join(sampleDir(t), "Empresas0.zip")))
		if err == nil || !strings.Contains(err.Error(), "the dump has no Estabelecimentos, Socios, Simples files") {
			t.Fatalf("got %v", err)
		}
		if id, n := liveState(t, d); id != liveID || n != members {
			t.Errorf("live snapshot changed: #%d with %d members, was #%d with %d", id, n, liveID, members)
		}
	})
	t.Run("wrong column count above threshold", func(t *testing.T) {
		dir := badDump(t, "Socios0.zip", badColumns)
		_, err := importer.Import(context.Background(), d, opts(t, dir))
		if err == nil || !strings.Contains(err.Error(), "Socios0.zip: 1 of 8 rows rejected") || !strings.Contains(err.Error(), "line 8: expected 11 columns, got 5") {
			t.Fatalf("got %v", err)
		}
		assertFailedAndLiveUntouched(t, d, liveID, members)
	})
	t.Run("wrong column count within threshold", func(t *testing.T) {
		dir := badDump(t, "Socios0.zip", badColumns)
		o := opts(t, dir)
		o.MaxRejectRatio = 0.2
		snap := mustImport(t, d, o)
		var rej struct {
			Total   int
			Files   map[string]int
			Samples []struct {
				File   string
				Line   int
				Reason string
			}
		}
		if err := json.Unmarshal(snap.RejectedRows, &rej); err != nil {
			t.Fatal(err)
		}
		if rej.Total != 1 || rej.Files["Socios0.zip"] != 1 || len(rej.Samples) != 1 || rej.Samples[0].Line != 8 || rej.Samples[0].File != "Socios0.zip" {
			t.Errorf("rejected %+v", rej)
		}
		liveID, members = liveState(t, d)
		if members != 7 {
			t.Errorf("members %d", members)
		}
	})
	t.Run("duplicated rows", func(t *testing.T) {
		dup := `"33683111";"SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO) 2";"2011";"16";"1,00";"05";""` + "\n"
		dir := badDump(t, "Empresas1.zip", addRow(dup))
		snap := mustImport(t, d, opts(t, dir))
		var name string
		if err := d.Get(&name, `SELECT name FROM cnpj.companies WHERE root = '33683111'`); err != nil || !strings.HasSuffix(name, " 2") {
			t.Errorf("kept %q, %v", name, err)
		}
		var counts map[string]int
		_ = json.Unmarshal(snap.RowCounts, &counts)
		if counts["companies"] != 2 || !strings.Contains(string(snap.RejectedRows), `"companies": 1`) {
			t.Errorf("counts %v rejected %s", counts, snap.RejectedRows)
		}
		liveID, members = liveState(t, d)
	})
	t.Run("duplicated establishment", func(t *testing.T) {
		// The dump's first establishment twice: one office, and one row
		// of its office signatures (their key is unique).
		dir := badDump(t, "Estabelecimentos0.zip", func(b []byte) []byte {
			first, _, _ := bytes.Cut(b, []byte("\n"))
			return append(b, append(first, '\n')...)
		})
		mustImport(t, d, opts(t, dir))
		var offices, signatures, withState int
		if err := d.QueryRow(`SELECT (SELECT count(*) FROM cnpj.offices), (SELECT count(*) FROM cnpj.office_signatures),
			(SELECT count(*) FROM cnpj.offices WHERE state IS NOT NULL)`).Scan(&offices, &signatures, &withState); err != nil {
			t.Fatal(err)
		}
		if offices == 0 || signatures != withState {
			t.Errorf("%d offices, %d with a state, %d signatures", offices, withState, signatures)
		}
		liveID, members = liveState(t, d)
	})
	t.Run("unterminated quote", func(t *testing.T) {
		dir := badDump(t, "Empresas1.zip", addRow(`"12345678";"BROKEN NAME`))
		_, err := importer.Import(context.Background(), d, opts(t, dir))
		if err == nil || !strings.Contains(err.Error(), "Empresas1.zip: line 2: unterminated quoted field") {
			t.Fatalf("got %v", err)
		}
		assertFailedAndLiveUntouched(t, d, liveID, members)
	})
	t.Run("invalid date", func(t *testing.T) {
		dir := badDump(t, "Simples.zip", addRow(`"12345678";"S";"20211301";"";"N";"";""`+"\n"))
		_, err := importer.Import(context.Background(), d, opts(t, dir))
		if err == nil || !strings.Contains(err.Error(), `line 2: invalid date "20211301" in column 2`) {
			t.Fatalf("got %v", err)
		}
		assertFailedAndLiveUntouched(t, d, liveID, members)
	})
	t.Run("truncated zip", func(t *testing.T) {
		dir := badDump(t, "Socios0.zip", func(b []byte) []byte { return b })
		path := filepath.Join(dir, "Estabelecimentos0.zip")
		b, _ := os.ReadFile(path)
		if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := importer.Import(context.Background(), d, opts(t, dir))
		if err == nil || !strings.Contains(err.Error(), "Estabelecimentos0.zip: not a readable ZIP file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("corrupt zip data", func(t *testing.T) {
		dir := t.TempDir()
		w := newZip(t, dir, "Socios0")
		for range 2000 {
			w.row("33683111", "2", "ANDRE DE CESERO", "***220050**", "10", "20160616", "", "***000000**", "", "00", "6")
		}
		w.close(t)
		path := filepath.Join(dir, "Socios0.zip")
		b, _ := os.ReadFile(path)
		for i := 80; i < 120; i++ { // inside the deflate stream
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		emptyKinds(t, dir)
		_, err := importer.Import(context.Background(), d, opts(t, dir))
		if err == nil || !strings.Contains(err.Error(), "Socios0.zip: line ") {
			t.Fatalf("got %v", err)
		}
		assertFailedAndLiveUntouched(t, d, liveID, members)
	})
}

func assertFailedAndLiveUntouched(t *testing.T, d *sqlx.DB, liveID int64, members int) {
	t.Helper()
	id, n := liveState(t, d)
	if id != liveID || n != members {
		t.Errorf("live snapshot changed: #%d with %d members, was #%d with %d", id, n, liveID, members)
	}
	var state, msg string
	if err := d.QueryRow(`SELECT state, coalesce(error, '') FROM snapshots ORDER BY id DESC LIMIT 1`).Scan(&state, &msg); err != nil {
		t.Fatal(err)
	}
	if state != "failed" || msg == "" {
		t.Errorf("last import: %s %q", state, msg)
	}
	var staging bool
	if err := d.Get(&staging, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'cnpj_staging')`); err != nil || staging {
		t.Errorf("staging schema left behind: %v %v", staging, err)
	}
}

// TestImportPrunesOlderOverlay: records fetched online before the dump's
// date give way to the snapshot; newer ones survive the import.
func TestImportPrunesOlderOverlay(t *testing.T) {
	d, _ := dbtest.New(t)
	older := time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)  // before the sample's 2025-12-07
	newer := time.Date(2025, 12, 20, 12, 0, 0, 0, time.UTC) // after it
	dbtest.MustExec(t, d, `INSERT INTO overlay_records (tax_id, portal, updated, body) VALUES
		('33683111000280', 'rfb', $1, '{}'), ('33683111000280', 'simples', $2, '{}')`, older, newer)
	mustImport(t, d, opts(t, sampleDir(t)))
	var portals []string
	if err := d.Select(&portals, `SELECT portal FROM overlay_records ORDER BY portal`); err != nil {
		t.Fatal(err)
	}
	if len(portals) != 1 || portals[0] != "simples" {
		t.Fatalf("overlay after the import: %v, want only the newer simples record", portals)
	}
}

// TestWordTables: with On the snapshot has the word table, one
// row per office and distinct word of its company's name or its alias,
// with the office's state; with Off it has none (name searches
// then use the GIN indexes); by default an import does as the live
// snapshot, none live meaning off, and a snapshot of the word tables before
// office_words (company_words) counting as on.
func TestWordTables(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 300, Seed: 5})
	exists := func() bool {
		var ok bool
		if err := d.Get(&ok, `SELECT to_regclass('cnpj.office_words') IS NOT NULL`); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, step := range []struct {
		choice importer.Choice
		want   bool
	}{
		{importer.AsLive, false}, // nothing live
		{importer.On, true},
		{importer.AsLive, true}, // the monthly sync keeps them
		{importer.Off, false},
		{importer.AsLive, false},
	} {
		mustImport(t, d, importer.Options{Paths: []string{dir}, WordTables: step.choice})
		if got := exists(); got != step.want {
			t.Fatalf("choice %d: word table %v, want %v", step.choice, got, step.want)
		}
	}
	// A snapshot with the word tables of before.
	if _, err := d.Exec(`CREATE TABLE cnpj.company_words (word text, root text)`); err != nil {
		t.Fatal(err)
	}
	mustImport(t, d, importer.Options{Paths: []string{dir}, WordTables: importer.AsLive})
	if !exists() {
		t.Fatal("a snapshot with company_words: the next import did not build office_words")
	}
	// Every (word, tax id, state) of the offices' names and aliases, once,
	// and nothing else.
	const want = `SELECT DISTINCT w, o.tax_id, o.state FROM cnpj.offices o LEFT JOIN cnpj.companies c ON c.root = o.root,
		unnest(coalesce(c.name_words, '{}') || coalesce(o.alias_words, '{}')) w`
	for _, q := range []string{
		`SELECT (SELECT count(*) FROM cnpj.office_words) = (SELECT count(*) FROM (` + want + `) x)`,
		`SELECT NOT EXISTS (SELECT word, tax_id, state FROM cnpj.office_words EXCEPT ` + want + `)
		    AND NOT EXISTS (` + want + ` EXCEPT SELECT word, tax_id, state FROM cnpj.office_words)`,
		`SELECT (SELECT count(*) FROM cnpj.offices WHERE alias_words IS NOT NULL) > 0`,
		`SELECT (SELECT count(*) FROM cnpj.persons, unnest(name_words) w) = (SELECT count(*) FROM cnpj.person_words)
		    AND NOT EXISTS (SELECT word, id FROM cnpj.person_words EXCEPT SELECT w, id FROM cnpj.persons, unnest(name_words) w)`,
	} {
		var ok bool
		if err := d.Get(&ok, q); err != nil || !ok {
			t.Errorf("word table differs from the names' and aliases' words (%v): %s", err, q)
		}
	}
	// The words' statistics target (see wordStatistics).
	var targets []int
	if err := d.Select(&targets, `SELECT attstattarget FROM pg_attribute
		WHERE attrelid IN ('cnpj.office_words'::regclass, 'cnpj.person_words'::regclass) AND attname = 'word'`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(targets, []int{1000, 1000}) {
		t.Errorf("word statistics targets %v, want [1000 1000]", targets)
	}
	// A snapshot is never written after its import: every b-tree of it,
	// the word tables' included, is packed full.
	var btrees []struct {
		Name   string
		Packed bool
	}
	if err := d.Select(&btrees, `SELECT c.relname AS name, coalesce(c.reloptions @> '{fillfactor=100}', false) AS packed
		FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE c.relnamespace = 'cnpj'::regnamespace AND c.relkind = 'i' AND a.amname = 'btree' ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	var loose []string
	for _, b := range btrees {
		if !b.Packed {
			loose = append(loose, b.Name)
		}
	}
	if len(btrees) < 20 || len(loose) > 0 {
		t.Errorf("%d b-trees in the snapshot; not packed full (fillfactor 100): %v", len(btrees), loose)
	}
}

// TestWordTablesAdvice: an import without the word tables of a registry at
// least Options.WordTablesAdvisedAt establishments large advises building
// them, with the count and the flag; one with them, or of a smaller
// registry, says nothing of the kind.
func TestWordTablesAdvice(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 200, Seed: 4})
	var offices int64
	for _, c := range []struct {
		words     importer.Choice
		advisedAt int64
		advice    bool
	}{
		{importer.Off, 1, true},
		{importer.On, 1, false},
		{importer.Off, 0, false}, // DefaultWordTablesAdvisedAt
		{importer.Off, -1, true}, // the live snapshot's count, exactly (set below)
	} {
		if c.advisedAt == -1 {
			c.advisedAt = offices
		}
		var progress bytes.Buffer
		mustImport(t, d, importer.Options{Paths: []string{dir}, WordTables: c.words, WordTablesAdvisedAt: c.advisedAt,
			Progress: &progress, AllowShrink: true})
		if err := d.Get(&offices, `SELECT count(*) FROM cnpj.offices`); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("note: %d establishments and no word tables", offices)
		if got := strings.Contains(progress.String(), want) && strings.Contains(progress.String(), "import --word-tables"); got != c.advice {
			t.Errorf("word tables %d, advised at %d: advice %v, want %v:\n%s", c.words, c.advisedAt, got, c.advice, progress.String())
		}
	}
}

// TestVisibilityWarning: a transaction older than the import, still open
// when it vacuums, keeps VACUUM from marking the new tables' pages
// all-visible; the import says so, naming the table and the remedy. A
// normal import says nothing of the kind.
func TestVisibilityWarning(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 200, Seed: 3})
	words := func(progress io.Writer, wait time.Duration) importer.Options {
		return importer.Options{Paths: []string{dir}, WordTables: importer.On, Progress: progress, VisibilityWait: wait}
	}
	unmarked := func() int {
		var n int
		if err := d.Get(&n, `SELECT count(*) FROM pg_class
			WHERE relnamespace = 'cnpj'::regnamespace AND relkind = 'r' AND relallvisible < relpages`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var progress bytes.Buffer
	mustImport(t, d, words(&progress, 0))
	if strings.Contains(progress.String(), "warning: VACUUM") || unmarked() != 0 {
		t.Fatalf("a normal import left %d tables unmarked:\n%s", unmarked(), progress.String())
	}

	// A transaction older than the import's rows, open through it.
	old, err := d.BeginTxx(context.Background(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = old.Rollback() }()
	if _, err := old.Exec(`SELECT 1`); err != nil { // its snapshot, held until it ends
		t.Fatal(err)
	}
	progress.Reset()
	mustImport(t, d, words(&progress, 200*time.Millisecond))
	if !strings.Contains(progress.String(), "of office_words all-visible") || !strings.Contains(progress.String(), "'VACUUM cnpj.office_words'") {
		t.Fatalf("no warning for office_words with an older transaction open:\n%s", progress.String())
	}
	if unmarked() == 0 {
		t.Fatal("warned, yet every table is all-visible")
	}

	// One that ends while the import waits for it: no warning.
	var waiting syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := importer.Import(context.Background(), d, words(&waiting, time.Minute))
		done <- err
	}()
	for !strings.Contains(waiting.String(), "transactions older than this import to end") {
		select {
		case err := <-done:
			t.Fatalf("the import ended (%v) without waiting for the older transaction:\n%s", err, waiting.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = old.Rollback()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(waiting.String(), "warning: VACUUM") || unmarked() != 0 {
		t.Fatalf("%d tables unmarked after the older transaction ended:\n%s", unmarked(), waiting.String())
	}
}

// TestSignatures: an import writes each company name's and alias's words
// signature (words.Signature of its words), the companies' primary key
// including theirs, and office_signatures, one row per office with a
// state, with both, all-visible for its index-only walk.
func TestSignatures(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 300, Seed: 6})
	mustImport(t, d, importer.Options{Paths: []string{dir}})
	for _, c := range []struct{ table, words, sig string }{
		{"companies", "name_words", "name_sig"},
		{"offices", "alias_words", "alias_sig"},
	} {
		var rows []struct {
			Words pq.StringArray `db:"words"`
			Sig   int64          `db:"sig"`
		}
		if err := d.Select(&rows, `SELECT `+c.words+` AS words, `+c.sig+` AS sig FROM cnpj.`+c.table); err != nil {
			t.Fatal(err)
		}
		signed := 0
		for _, r := range rows {
			if want := int64(words.Signature(r.Words)); r.Sig != want {
				t.Fatalf("%s: words %q, signature %x, want %x", c.table, r.Words, r.Sig, want)
			}
			if r.Sig != 0 {
				signed++
			}
		}
		if signed == 0 {
			t.Errorf("%s: no signature written", c.table)
		}
	}
	for _, q := range []string{
		`SELECT NOT EXISTS (SELECT state_tax_id, name_sig, alias_sig FROM cnpj.office_signatures
			EXCEPT SELECT o.state || o.tax_id, coalesce(c.name_sig, 0), o.alias_sig FROM cnpj.offices o LEFT JOIN cnpj.companies c ON c.root = o.root)
		    AND (SELECT count(*) FROM cnpj.office_signatures) = (SELECT count(*) FROM cnpj.offices WHERE state IS NOT NULL)`,
		`SELECT relallvisible = relpages AND relpages > 0 FROM pg_class WHERE oid = 'cnpj.office_signatures'::regclass`,
		`SELECT to_regclass('cnpj.office_signatures_state') IS NOT NULL`,
		`SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
			WHERE i.indrelid = 'cnpj.companies'::regclass AND i.indisprimary AND a.attname = 'name_sig')`,
	} {
		var ok bool
		if err := d.Get(&ok, q); err != nil || !ok {
			t.Errorf("office signatures (%v): %s", err, q)
		}
	}
}

// TestOfficeLookups: an import writes office_lookups, one row per office
// holding the office's columns and its company's as the office lookup's
// join reads them (a company-less office with nulls), keyed by tax id and
// all-visible.
func TestOfficeLookups(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 300, Seed: 7})
	mustImport(t, d, importer.Options{Paths: []string{dir}})
	joined := `SELECT o.*, c.root AS company_root, c.name, c.nature, c.equity::text AS equity, c.size, c.jurisdiction,
		c.simples_optant, c.simples_since, c.simei_optant, c.simei_since, c.members
		FROM cnpj.offices o LEFT JOIN cnpj.companies c ON c.root = o.root`
	columns := `l.tax_id, l.root, l.head, l.alias, l.status, l.status_date, l.reason, l.city_abroad, l.country, l.founded,
		l.main_activity, l.side_activities, l.street, l.number, l.details, l.district, l.zip, l.state, l.municipality,
		l.phones, l.email, l.special, l.special_date, l.company_root, l.name, l.nature, l.equity, l.size,
		l.jurisdiction, l.simples_optant, l.simples_since, l.simei_optant, l.simei_since, l.members`
	var offices, lookups, differ, members int
	if err := d.QueryRow(`SELECT (SELECT count(*) FROM cnpj.offices), (SELECT count(*) FROM cnpj.office_lookups),
		(SELECT count(*) FROM (SELECT `+strings.ReplaceAll(columns, "l.", "j.")+` FROM (`+joined+`) j
			EXCEPT SELECT `+columns+` FROM cnpj.office_lookups l) x),
		(SELECT count(*) FROM cnpj.office_lookups WHERE members IS NOT NULL)`).Scan(&offices, &lookups, &differ, &members); err != nil {
		t.Fatal(err)
	}
	if offices == 0 || lookups != offices || differ != 0 || members == 0 {
		t.Errorf("offices %d, office_lookups %d, of which %d differ from the join and %d hold members", offices, lookups, differ, members)
	}
	for _, q := range []string{
		`SELECT relallvisible = relpages AND relpages > 0 FROM pg_class WHERE oid = 'cnpj.office_lookups'::regclass`,
		`SELECT indisunique FROM pg_index WHERE indexrelid = 'cnpj.office_lookups_pkey'::regclass`,
		`SELECT indnkeyatts = 1 AND indnatts = 6 FROM pg_index WHERE indexrelid = 'cnpj.office_lookups_activity'::regclass`,
	} {
		var ok bool
		if err := d.Get(&ok, q); err != nil || !ok {
			t.Errorf("office lookups (%v): %s", err, q)
		}
	}
}

// TestSideActivitiesAsWritten: a side-activity list is kept item by item
// whatever its items hold (the dump's own text, spaces and empty items
// aside): an item that PostgreSQL's array syntax would read otherwise
// (null, braces, a backslash) is quoted, not taken for NULL or nesting.
func TestSideActivitiesAsWritten(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := badDump(t, "Estabelecimentos0.zip", func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"6201501,6202300,6203100,6209100,6311900"`),
			[]byte(`" 6201501 ,62.02-3/00,null,NULL,c\d,{x},,6311900"`), 1)
	})
	mustImport(t, d, opts(t, dir))
	var got pq.StringArray
	if err := d.Get(&got, `SELECT side_activities FROM cnpj.offices WHERE tax_id = $1`, dbtest.SerproBranch); err != nil {
		t.Fatal(err)
	}
	want := []string{"6201501", "62.02-3/00", "null", "NULL", `c\d`, "{x}", "6311900"}
	if !slices.Equal(got, want) {
		t.Errorf("side activities %q, want %q", got, want)
	}
}

// TestShrinkRefused: a dump with under half the live snapshot's
// establishments is refused once loaded (a partial or broken month), the
// served registry untouched and the import listed as failed; AllowShrink
// imports it.
func TestShrinkRefused(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	mustImport(t, d, opts(t, generated(t, generator.Options{Companies: 40, Seed: 3})))
	liveID, members := liveState(t, d)
	live, err := db.LiveSnapshot(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var counts map[string]int64
	if err := json.Unmarshal(live.RowCounts, &counts); err != nil || counts["offices"] < 4 {
		t.Fatalf("the generated dump's counts %s (%v): want 4 offices or more", live.RowCounts, err)
	}

	_, err = importer.Import(context.Background(), d, opts(t, sampleDir(t)))
	want := "the dump has 1 establishments, under half of the live snapshot's " + strconv.FormatInt(counts["offices"], 10)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-shrink") {
		t.Fatalf("got %v, want %q", err, want)
	}
	assertFailedAndLiveUntouched(t, d, liveID, members)

	o := opts(t, sampleDir(t))
	o.AllowShrink = true
	if snap := mustImport(t, d, o); snap.ID == liveID {
		t.Errorf("AllowShrink: snapshot #%d still live", snap.ID)
	}
}
