package dbtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/words"
)

// Fixture tax ids and keys, for tests to name.
const (
	SerproRoot     = "33683111"
	SerproBranch   = "33683111000280" // the sample's only SERPRO office
	SerproHead     = "33683111000107" // valid, but not in the sample
	OKBRRoot       = "19131243"       // company and member, no office
	BigRoot        = "11222333"       // 31 offices, 60 members, agents, foreigners
	AlphaTaxID     = "12ABC34501DE35" // alphanumeric CNPJ, Simples history
	AlphaRoot      = "12ABC345"
	AbroadRoot     = "44555666" // office abroad (EX), porte 00, jurisdiction
	BigOffices     = 31
	BigMembers     = 60
	ReferenceDate  = "2025-12-07"
	FixtureSpecial = "RECUPERACAO JUDICIAL"
)

// BigHead is the head office of BigRoot.
var BigHead = string(cnpj.Build(BigRoot, "0001"))

// AbroadTaxID is the office abroad.
var AbroadTaxID = string(cnpj.Build(AbroadRoot, "0001"))

// Reference is the fixture snapshot's reference date.
func Reference() time.Time {
	t, _ := time.Parse("2006-01-02", ReferenceDate)
	return t
}

// CreateLiveSchema creates the snapshot schema "cnpj" with its tables and
// indexes, empty.
func CreateLiveSchema(t testing.TB, d *sqlx.DB) {
	t.Helper()
	ctx := context.Background()
	conn, err := d.Connx(ctx)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE SCHEMA " + db.LiveSchema + "; SET search_path TO " + db.LiveSchema,
		db.SnapshotTables, db.SnapshotIndexes, "RESET search_path"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("dbtest: snapshot schema: %v", err)
		}
	}
}

// Person is a fixture person.
type Person struct {
	Type, TaxID, Name, Age, Country string
}

// ID is the person's deterministic id.
func (p Person) ID() string { return cnpj.PersonID(cnpj.PersonType(p.Type), p.TaxID, p.Name) }

// SerproMembers are the SERPRO sample's members, in dump order.
var SerproMembers = []struct {
	Person Person
	Role   string
	Since  string
}{
	{Person{"NATURAL", "***220050**", "ANDRE DE CESERO", "6", ""}, "10", "2016-06-16"},
	{Person{"NATURAL", "***595901**", "ANTONIO DE PADUA FERREIRA PASSOS", "7", ""}, "10", "2016-12-08"},
	{Person{"NATURAL", "***414127**", "WILSON BIANCARDI COURY", "8", ""}, "10", "2019-06-18"},
	{Person{"NATURAL", "***099595**", "GILENO GURJAO BARRETO", "5", ""}, "16", "2020-02-03"},
	{Person{"NATURAL", "***989951**", "RICARDO CEZAR DE MOURA JUCA", "5", ""}, "10", "2020-05-12"},
	{Person{"NATURAL", "***073447**", "ANTONINO DOS SANTOS GUERRA NETO", "7", ""}, "05", "2019-02-11"},
}

// OKBRMember is Open Knowledge Brasil's member.
var OKBRMember = Person{"NATURAL", "***690948**", "FERNANDA CAMPAGNUCCI PEREIRA", "4", ""}

// Synthetic persons of BigRoot worth naming.
var (
	HoldingPerson  = Person{"LEGAL", "33683111000280", "SERPRO PARTICIPACOES", "", ""}
	HoldingAgent   = Person{"NATURAL", "***123456**", "MARIA REPRESENTANTE", "", ""}
	ForeignPerson  = Person{"FOREIGN", "", "JOHN SMITH", "5", "249"}
	ForeignCompany = Person{"FOREIGN", "", "ACME HOLDINGS LLC", "", "999"}
	ForeignAgent   = Person{"NATURAL", "***654321**", "JOSE PROCURADOR", "", ""}
)

// LoadFixture builds a live snapshot that mirrors the SERPRO sample of the
// RFB dump exactly, plus synthetic companies for the cases the sample lacks.
// It returns the snapshot's id.
func LoadFixture(t testing.TB, d *sqlx.DB) int64 {
	t.Helper()
	CreateLiveSchema(t, d)
	ex := func(q string, args ...any) {
		t.Helper()
		if _, err := d.Exec(q, args...); err != nil {
			t.Fatalf("dbtest: fixture: %v\n%s", err, q)
		}
	}
	// Code tables: the sample's, and what the synthetic rows use.
	ex(`INSERT INTO cnpj.activities VALUES
		('6204000','Consultoria em tecnologia da informação'),
		('6201501','Desenvolvimento de programas de computador sob encomenda'),
		('6202300','Desenvolvimento e licenciamento de programas de computador customizáveis'),
		('6203100','Desenvolvimento e licenciamento de programas de computador não-customizáveis'),
		('6209100','Suporte técnico, manutenção e outros serviços em tecnologia da informação'),
		('6311900','Tratamento de dados, provedores de serviços de aplicação e serviços de hospedagem na internet'),
		('4711302','Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - supermercados')`)
	ex(`INSERT INTO cnpj.reasons VALUES ('00','SEM  MOTIVO'),('01','EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA')`)
	ex(`INSERT INTO cnpj.natures VALUES ('2011','Empresa Pública'),('2054','Sociedade Anônima Fechada'),
		('2062','Sociedade Empresária Limitada'),('1104','Autarquia Federal')`)
	ex(`INSERT INTO cnpj.roles VALUES ('00','Não informada'),('05','Administrador'),('10','Diretor'),
		('16','Presidente'),('22','Sócio'),('49','Sócio-Administrador'),('37','Sócio Pessoa Jurídica Domiciliado no Exterior'),
		('38','Sócio Pessoa Física Residente no Exterior'),('17','Procurador')`)
	ex(`INSERT INTO cnpj.countries VALUES ('105','BRASIL',76),('249','ESTADOS UNIDOS',840),('999','PAIS DESCONHECIDO',NULL)`)
	ex(`INSERT INTO cnpj.municipalities VALUES ('9701','BRASILIA',5300108,'DF'),('7107','SAO PAULO',3550308,'SP'),
		('9707','EXTERIOR',NULL,'EX')`)

	// The SERPRO sample.
	ex(`INSERT INTO cnpj.companies VALUES
		('33683111','SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)','2011','16',1061004829.23,'05',NULL),
		('19131243','OPEN KNOWLEDGE BRASIL','3999','16',0.00,'05',NULL)`)
	ex(`INSERT INTO cnpj.offices (tax_id, root, head, alias, status, status_date, reason, founded, main_activity,
		side_activities, street, number, details, district, zip, state, municipality, phones)
		VALUES ('33683111000280','33683111',false,'REGIONAL BRASILIA-DF','02','2004-05-22','00','1967-06-30','6204000',
		'{6201501,6202300,6203100,6209100,6311900}','AVENIDA L2 SGAN','601','MODULO G','ASA NORTE','70836900','DF','9701','{}')`)
	ex(`INSERT INTO cnpj.simples VALUES ('33683111',true,'2014-01-01',NULL,false,NULL,NULL)`)
	persons := map[string]Person{}
	addPerson := func(p Person) {
		persons[p.ID()] = p
	}
	member := func(root string, pos int, p Person, role, since string, agent *Person, agentRole string) {
		t.Helper()
		addPerson(p)
		var agentID, aRole any
		if agent != nil {
			addPerson(*agent)
			agentID, aRole = agent.ID(), agentRole
		}
		var s any
		if since != "" {
			s = since
		}
		ex(`INSERT INTO cnpj.members VALUES ($1,$2,$3,$4,$5,$6,$7)`, root, pos, p.ID(), role, s, agentID, aRole)
	}
	for i, m := range SerproMembers {
		member(SerproRoot, i+1, m.Person, m.Role, m.Since, nil, "")
	}
	member(OKBRRoot, 1, OKBRMember, "16", "2019-10-25", nil, "")

	// A branch-heavy company with many members, agents and foreigners.
	ex(`INSERT INTO cnpj.companies VALUES ($1,'GRANDE REDE DE LOJAS S.A.','2054','10',250000.50,'05',NULL)`, BigRoot)
	for i := 1; i <= BigOffices; i++ {
		taxID := string(cnpj.Build(BigRoot, fmt.Sprintf("%04d", i)))
		status, reason, statusDate := "02", "00", "2005-03-01"
		switch {
		case i == 1:
		case i%5 == 0:
			status, reason, statusDate = "08", "01", "2018-11-30"
		case i%7 == 0:
			status, reason, statusDate = "04", "32", "2021-07-15" // motivo 32 is missing from the code table
		}
		var alias, special, specialDate, email any
		phones := pq.StringArray{}
		if i == 1 {
			alias, special, specialDate = "GRANDE REDE", FixtureSpecial, "2023-05-10"
			email = "CONTATO@GRANDEREDE.COM.BR"
			phones = pq.StringArray{"11", "33334444", "11", "0"} // the second is a placeholder
		}
		ex(`INSERT INTO cnpj.offices (tax_id, root, head, alias, status, status_date, reason, founded, main_activity,
			side_activities, street, number, details, district, zip, state, municipality, phones, email, special, special_date)
			VALUES ($1,$2,$3,$4,$5,$6,$7,'1990-01-15','4711302','{}','RUA DAS FLORES',$8,'','CENTRO','01001000','SP','7107',$9,$10,$11,$12)`,
			taxID, BigRoot, i == 1, alias, status, statusDate, reason, fmt.Sprint(100+i), phones, email, special, specialDate)
	}
	pos := 0
	next := func() int { pos++; return pos }
	member(BigRoot, next(), HoldingPerson, "22", "2010-01-01", &HoldingAgent, "05")
	member(BigRoot, next(), ForeignPerson, "38", "2012-02-02", nil, "")
	member(BigRoot, next(), ForeignCompany, "37", "2013-03-03", &ForeignAgent, "17")
	member(BigRoot, next(), SerproMembers[0].Person, "49", "2015-05-05", nil, "")
	for pos < BigMembers {
		i := pos
		p := Person{"NATURAL", fmt.Sprintf("***%06d**", 100000+i), fmt.Sprintf("SOCIO NUMERO %02d", i), fmt.Sprint(i % 10), ""}
		member(BigRoot, next(), p, "22", "", nil, "")
	}

	// An alphanumeric CNPJ with a Simples history and SIMEI enrolment.
	ex(`INSERT INTO cnpj.companies VALUES ($1,'ALFA NUMERICA TECNOLOGIA LTDA','2062','49',10000.00,'01',NULL)`, AlphaRoot)
	ex(`INSERT INTO cnpj.offices (tax_id, root, head, alias, status, status_date, reason, founded, main_activity,
		side_activities, street, number, details, district, zip, state, municipality, phones, email)
		VALUES ($1,$2,true,'','02','2026-07-01','00','2026-07-01','6204000','{}','RUA NOVA','S/N',NULL,'CENTRO',
		'70000000','DF','9701','{61,99998888}','alfa@example.com')`, AlphaTaxID, AlphaRoot)
	ex(`INSERT INTO cnpj.simples VALUES ($1,false,'2018-03-01','2020-12-31',true,'2021-01-01',NULL)`, AlphaRoot)
	ex(`INSERT INTO cnpj.simples_periods VALUES ($1,'SIMPLES','2010-01-01','2012-06-30'),($1,'SIMEI','2015-01-01','2016-12-31')`, AlphaRoot)
	member(AlphaRoot, 1, Person{"NATURAL", "***111222**", "ANA ALFA", "3", ""}, "49", "2026-07-01", nil, "")

	// An office abroad, of a company without size and with a jurisdiction.
	ex(`INSERT INTO cnpj.companies VALUES ($1,'AGENCIA FEDERAL NO EXTERIOR','1104','16',0,'00','UNIAO')`, AbroadRoot)
	ex(`INSERT INTO cnpj.offices (tax_id, root, head, alias, status, status_date, reason, city_abroad, country,
		founded, main_activity, side_activities, street, number, district, zip, state, municipality, phones)
		VALUES ($1,$2,true,NULL,'02','2000-01-01','00','MIAMI','249','2000-01-01','6204000','{}','BRICKELL AVE','1000',
		'','','EX','9707','{}')`, AbroadTaxID, AbroadRoot)

	for id, p := range persons {
		ex(`INSERT INTO cnpj.persons VALUES ($1,$2,$3,$4,$5,$6,$7)`, id, p.Type, nullIf(p.TaxID), p.Name, nullIf(p.Age), nullIf(p.Country),
			wordsOf(p.Name))
	}
	// The search words of the names, as the importer writes them.
	var names []struct{ Key, Name string }
	if err := d.Select(&names, `SELECT root AS key, name FROM cnpj.companies UNION ALL
		SELECT tax_id, alias FROM cnpj.offices WHERE alias IS NOT NULL`); err != nil {
		t.Fatalf("dbtest: names: %v", err)
	}
	for _, n := range names {
		if len(n.Key) == 8 {
			ex(`UPDATE cnpj.companies SET name_words = $2 WHERE root = $1`, n.Key, wordsOf(n.Name))
		} else {
			ex(`UPDATE cnpj.offices SET alias_words = $2 WHERE tax_id = $1`, n.Key, wordsOf(n.Name))
		}
	}
	Fold(t, d)
	var snapID int64
	if err := d.Get(&snapID, `INSERT INTO snapshots (state, dump_month, reference_date, finished_at)
		VALUES ('live', '2025-12', $1, now()) RETURNING id`, ReferenceDate); err != nil {
		t.Fatalf("dbtest: fixture snapshot: %v", err)
	}
	return snapID
}

// wordsOf is a name's words column: NULL when it has none.
func wordsOf(name string) any {
	ws := words.Of(name)
	if len(ws) == 0 {
		return nil
	}
	return pq.Array(ws)
}

func nullIf(s string) any {
	if s == "" || s == "0" {
		return nil
	}
	return s
}

// Sign gives the live snapshot's companies and offices the signatures of
// their words (words.Signature, as the importer writes them) and derives
// office_signatures with its index, as an import does: the name searches
// with one state then walk the signatures.
func Sign(t testing.TB, d *sqlx.DB) {
	t.Helper()
	for _, c := range []struct{ table, key, words, sig string }{
		{"companies", "root", "name_words", "name_sig"},
		{"offices", "tax_id", "alias_words", "alias_sig"},
	} {
		var rows []struct {
			Key   string         `db:"key"`
			Words pq.StringArray `db:"words"`
		}
		if err := d.Select(&rows, `SELECT `+c.key+` AS key, `+c.words+` AS words FROM `+db.LiveSchema+`.`+c.table+
			` WHERE `+c.words+` IS NOT NULL`); err != nil {
			t.Fatalf("dbtest: sign %s: %v", c.table, err)
		}
		keys, sigs := make([]string, len(rows)), make([]int64, len(rows))
		for i, r := range rows {
			keys[i], sigs[i] = r.Key, int64(words.Signature(r.Words))
		}
		MustExec(t, d, `UPDATE `+db.LiveSchema+`.`+c.table+` t SET `+c.sig+` = v.sig
			FROM unnest($1::text[], $2::bigint[]) v(key, sig) WHERE t.`+c.key+` = v.key`, pq.Array(keys), pq.Array(sigs))
	}
	conn, err := d.Connx(context.Background())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	defer conn.Close()
	for _, q := range []string{"SET search_path TO " + db.LiveSchema, "DROP TABLE IF EXISTS office_signatures",
		db.OfficeSignaturesSQL, db.OfficeSignaturesIndexSQL, "VACUUM ANALYZE office_signatures", "RESET search_path"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("dbtest: office signatures: %v\n%s", err, q)
		}
	}
}

// Fold gives the live snapshot's companies their Simples enrolment and
// members (db.RefoldCompaniesSQL), as the import folds them in, and derives
// office_lookups from the offices and companies again: for tests that
// write the offices, companies, Simples rows or members themselves.
func Fold(t testing.TB, d *sqlx.DB) {
	t.Helper()
	conn, err := d.Connx(context.Background())
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	defer conn.Close()
	for _, q := range []string{"SET search_path TO " + db.LiveSchema, db.RefoldCompaniesSQL,
		"DROP TABLE IF EXISTS office_lookups", db.OfficeLookupsSQL, db.OfficeLookupsIndexSQL, db.OfficeLookupsActivitySQL,
		db.OfficeLookupsAliasFactsSQL, "RESET search_path"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("dbtest: fold the companies: %v\n%s", err, q)
		}
	}
}

// NewLiveSnapshot puts a new snapshot live over the tables as they are (an
// import's swap, as the store sees it) and has the store's catalog see it.
func NewLiveSnapshot(t testing.TB, d *sqlx.DB, store *db.Store) {
	t.Helper()
	MustExec(t, d, `UPDATE snapshots SET state = 'retired' WHERE state = 'live'`)
	MustExec(t, d, `INSERT INTO snapshots (state, dump_month, reference_date, finished_at)
		VALUES ('live', '2025-12', $1, now())`, ReferenceDate)
	if _, err := store.Catalog.Refresh(context.Background()); err != nil {
		t.Fatalf("dbtest: refresh the catalog: %v", err)
	}
}
