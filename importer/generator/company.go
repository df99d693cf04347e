package generator

import (
	"io"
	"math/rand/v2"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
)

// Stream ids: each file draws from its own PCG stream per company, so files
// can be written independently and still agree on every company.
const (
	sPlan uint64 = iota + 1
	sOffice
	sMember
	sSimples
	sPool
	sMisc
)

// Companies with a fixed feature, so that every feature is present even in a
// small dump (tests rely on them).
const (
	anchorAlpha   = 2 // alphanumeric root
	anchorHead2   = 3 // head office with order 0002, closed branch 0001
	anchorAbroad  = 4 // head office abroad (UF EX)
	anchorMembers = 5 // one partner of every kind
	firstFree     = 10
)

type gen struct {
	n, parts  int
	seed      uint64
	dump      time.Time
	dumpDays  int // days since 1970-01-01 of the dump date
	alphaDays int // first day alphanumeric roots exist (2026-07-01)
	dumpTag   string
	modified  time.Time
	rootAdd   uint64
	big       []int // indices of the companies with thousands of offices
	bigOff    []int
	pool      int // size of the shared natural-person pool
}

func mix(a, b uint64) uint64 {
	z := a ^ (b+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func newGen(o Options) *gen {
	g := &gen{n: o.Companies, parts: o.Parts, seed: uint64(o.Seed)}
	// The dump pretends to be from a day in July..December 2026, so that
	// alphanumeric roots (issued from July 2026) can exist.
	month := time.Month(7 + g.seed%6)
	day := 8 + int(g.seed/6%7)
	g.dump = time.Date(2026, month, day, 0, 0, 0, 0, time.UTC)
	g.dumpDays = int(g.dump.Unix() / 86400)
	g.alphaDays = int(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	g.dumpTag = g.dump.Format("D") + g.dump.Format("2006")[3:] + g.dump.Format("0102")
	g.modified = g.dump.AddDate(0, 0, -2).Add(13*time.Hour + 20*time.Minute)
	g.rootAdd = mix(g.seed, 7) % 100_000_000
	g.pool = max(50, g.n/20)
	nBig := 0
	switch {
	case g.n >= 1000:
		nBig = 3 + (g.n-1000)/250_000
	case g.n >= 100:
		nBig = 1
	}
	taken := map[int]bool{}
	for k := 0; k < nBig; k++ {
		i := firstFree + int(mix(g.seed, 100+uint64(k))%uint64(g.n-firstFree))
		for taken[i] {
			i = firstFree + (i-firstFree+1)%(g.n-firstFree)
		}
		taken[i] = true
		g.big = append(g.big, i)
		spread := min(4000, g.n/100)
		g.bigOff = append(g.bigOff, min(1000, g.n/10)+int(mix(g.seed, 200+uint64(k))%uint64(spread+1)))
	}
	return g
}

// partRange gives the companies of part p: part 0 weighs 4, the others 1,
// like the real dump whose part 0 is several times larger.
func (g *gen) partRange(p int) (lo, hi int) {
	w := 4 + g.parts - 1
	cum := func(p int) int {
		if p == 0 {
			return 0
		}
		return 4 + p - 1
	}
	return int(int64(g.n) * int64(cum(p)) / int64(w)), int(int64(g.n) * int64(cum(p+1)) / int64(w))
}

func (g *gen) officeCost(lo, hi int) int {
	c := hi - lo
	for k, i := range g.big {
		if i >= lo && i < hi {
			c += g.bigOff[k]
		}
	}
	return c
}

func (g *gen) bigIndex(i int) int {
	for k, b := range g.big {
		if b == i {
			return k
		}
	}
	return -1
}

// rng is a PCG stream for one company and one file.
type rng struct{ p rand.PCG }

func (g *gen) rng(stream uint64, i int) *rng {
	r := &rng{}
	r.p.Seed(mix(g.seed, stream), uint64(i))
	return r
}

func (r *rng) n(k int) int            { return int(r.p.Uint64() % uint64(k)) }
func (r *rng) per(x int) bool         { return r.n(10000) < x } // x in 1/10000
func (r *rng) pick(s []string) string { return s[r.n(len(s))] }
func (r *rng) between(lo, hi int) int { return lo + r.n(hi-lo+1) }
func (r *rng) digits(b []byte, k int) []byte {
	for ; k > 0; k-- {
		b = append(b, byte('0'+r.n(10)))
	}
	return b
}

// root is f(i): a bijection of [0, 1e8) (multiplier coprime with 10^8), with
// two digits turned into letters for alphanumeric companies. Letters make
// alphanumeric roots disjoint from numeric ones, and the digit-to-letter map
// is injective, so roots never collide.
func (g *gen) root(i int) string {
	v := (uint64(i)*48271 + g.rootAdd) % 100_000_000
	var b [8]byte
	for k := 7; k >= 0; k-- {
		b[k] = byte('0' + v%10)
		v /= 10
	}
	if g.alpha(i) {
		b[0] = 'A' + (b[0] - '0')
		b[5] = 'P' + (b[5] - '0')
	}
	return string(b[:])
}

func (g *gen) alpha(i int) bool {
	return i == anchorAlpha || (i >= firstFree && mix(g.seed^0xa1fa, uint64(i))%1000 < 30)
}

func (g *gen) headOrder(i int) string {
	if i == anchorHead2 || (i >= firstFree && mix(g.seed^0x4ead, uint64(i))%2000 == 0) {
		return "0002"
	}
	return "0001"
}

// headCNPJ is the head office CNPJ of company i, computable without state.
func (g *gen) headCNPJ(i int) string {
	return string(cnpj.Build(g.root(i), g.headOrder(i)))
}

type kind int

const (
	kIndividual kind = iota // empresário individual, produtor rural: no partners
	kLimited                // limitada, sociedade simples
	kEireli
	kSA
	kAssociation
	kCondo
	kPublic
	kOther
)

type nature struct {
	code   string
	weight int // per 1000
	kind   kind
}

var natureMix = []nature{
	{"2135", 460, kIndividual}, {"2062", 328, kLimited}, {"2305", 30, kEireli}, {"2240", 20, kLimited},
	{"2232", 5, kLimited}, {"2054", 15, kSA}, {"2046", 3, kSA}, {"2143", 5, kAssociation}, {"2321", 5, kEireli},
	{"3999", 60, kAssociation}, {"3085", 20, kCondo}, {"3220", 12, kAssociation}, {"4120", 20, kIndividual},
	{"1031", 6, kPublic}, {"1244", 2, kPublic}, {"1015", 3, kPublic}, {"1104", 2, kPublic}, {"2011", 1, kSA},
	{"2038", 1, kSA}, {"8885", 2, kOther},
}

// plan is what several files must agree on about a company.
type plan struct {
	i         int
	root      string
	headOrder string
	alpha     bool
	nature    string
	kind      kind
	name      string // Latin-1
	owner     string // the individual's name, for e-mails and fantasia
	founded   int    // days since epoch of the head office's start
	offices   int
	partners  int
	mun       int // index in brMunicipios of the head office
	big       bool
}

func (g *gen) plan(i int) plan {
	r := g.rng(sPlan, i)
	p := plan{i: i, root: g.root(i), headOrder: g.headOrder(i), alpha: g.alpha(i), offices: 1}
	x := r.n(1000)
	for _, nt := range natureMix {
		if x < nt.weight {
			p.nature, p.kind = nt.code, nt.kind
			break
		}
		x -= nt.weight
	}
	bk := g.bigIndex(i)
	if bk >= 0 {
		p.big = true
		p.nature, p.kind = []string{"2046", "2054", "2011"}[bk%3], kSA
	}
	if i == anchorMembers {
		p.nature, p.kind = "2062", kLimited
	}
	p.mun = pickMunicipio(r)
	mun := brMunicipios[p.mun]
	p.owner = personName(r)
	brand, theme := r.pick(brands), r.pick(themes)
	switch p.nature {
	case "2135", "4120":
		p.name = p.owner
		if r.per(6000) {
			p.name += " " + string(r.digits(nil, 11)) // the owner's full CPF, as the real dump often shows
		}
	case "2062", "2240", "2232":
		switch {
		case r.per(50):
			p.name = brand + "; " + theme + " LTDA" // ';' inside a field
		case r.per(3000):
			p.name = theme + " " + brand + " LTDA"
		default:
			p.name = brand + " " + theme + " LTDA"
		}
	case "2305":
		p.name = brand + " " + theme + " EIRELI"
	case "2321":
		p.name = p.owner + " SOCIEDADE INDIVIDUAL DE ADVOCACIA"
	case "2046", "2054", "2038":
		p.name = brand + " " + theme + " S.A."
	case "2011":
		p.name = latin1("EMPRESA BRASILEIRA DE ") + theme
	case "2143":
		p.name = latin1("COOPERATIVA DE PRODUÇÃO ") + brand
	case "3999":
		if r.per(5000) {
			p.name = latin1("ASSOCIAÇÃO DOS MORADORES DO BAIRRO ") + r.pick(districts)
		} else {
			p.name = latin1("ASSOCIAÇÃO BENEFICENTE ") + brand
		}
	case "3085":
		p.name = latin1("CONDOMÍNIO EDIFÍCIO ") + brand
	case "3220":
		p.name = latin1("IGREJA EVANGÉLICA ") + brand
	case "1031":
		p.name = latin1("SECRETARIA MUNICIPAL DE SAÚDE DE ") + mun.name
	case "1244":
		p.name = latin1("MUNICÍPIO DE ") + mun.name
	case "1015":
		p.name = latin1("MINISTÉRIO DA ") + theme
	case "1104":
		p.name = latin1("INSTITUTO FEDERAL DE EDUCAÇÃO DE ") + mun.name
	default:
		p.name = brand + " " + theme
	}
	lo := g.dumpDays - 365*60
	if p.alpha {
		lo = g.alphaDays
	}
	p.founded = r.between(lo, g.dumpDays)
	switch {
	case p.big:
		p.offices = g.bigOff[bk]
	case r.per(900):
		p.offices = 2 + r.n(4)
	}
	if i == anchorHead2 && p.offices < 2 {
		p.offices = 2
	}
	switch p.kind {
	case kLimited:
		x := r.n(100)
		switch {
		case x < 45: // QSA not published, as for many old limitadas
		case x < 75:
			p.partners = 1
		case x < 92:
			p.partners = 2
		case x < 98:
			p.partners = 3
		default:
			p.partners = 4 + r.n(3)
		}
	case kEireli:
		if r.per(7000) {
			p.partners = 1
		}
	case kSA:
		p.partners = 2 + r.n(4)
	case kAssociation:
		if r.per(3000) {
			p.partners = 1 + r.n(4)
		}
	case kCondo:
		p.partners = 1
	case kPublic:
		p.partners = r.n(2)
	}
	if p.kind != kIndividual && (p.big || r.per(10)) {
		p.partners = 12 + r.n(49)
	}
	if i == anchorMembers {
		p.partners = 7
	}
	return p
}

func personName(r *rng) string {
	s := r.pick(firstNames)
	if r.per(3000) {
		s += " " + r.pick(firstNames)
	}
	s += " " + r.pick(surnames)
	if r.per(6000) {
		s += " " + r.pick(surnames)
	}
	return s
}

// pickMunicipio returns an index in brMunicipios: a third of offices in a
// capital (São Paulo the most), the rest spread over the towns.
func pickMunicipio(r *rng) int {
	x := r.n(100)
	switch {
	case x < 12:
		return 19 // SÃO PAULO
	case x < 35:
		return r.n(len(capitals))
	default:
		return r.n(len(brMunicipios))
	}
}

// civil converts days since 1970-01-01 to YYYYMMDD (Hinnant's algorithm).
func civil(days int) int {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y*10000 + m*100 + d
}

func appendDate(b []byte, days int) []byte { return itoaPad(b, civil(days), 8) }

// nullDate is one of the forms the dump uses for "no date".
func nullDate(r *rng) string { return []string{"", "0", "00000000"}[r.n(3)] }

func (g *gen) writeEmpresas(w io.Writer, lo, hi int) (int, error) {
	var rc rec
	for i := lo; i < hi; i++ {
		p := g.plan(i)
		g.empresa(&rc, &p)
		if err := rc.flush(w, false); err != nil {
			return 0, err
		}
	}
	return hi - lo, rc.flush(w, true)
}

func (g *gen) empresa(rc *rec, p *plan) {
	r := g.rng(sMisc, p.i)
	var b [40]byte
	rc.f(p.root)
	rc.f(p.name)
	rc.f(p.nature)
	resp := "49"
	switch p.kind {
	case kIndividual:
		resp = "50"
	case kEireli:
		resp = "65"
	case kSA:
		resp = []string{"10", "16", "05"}[r.n(3)]
	case kAssociation:
		resp = "16"
	case kCondo:
		resp = "19"
	case kPublic:
		resp = []string{"05", "16", "17"}[r.n(3)]
	case kOther:
		resp = "00"
	}
	rc.f(resp)
	// Capital social: comma decimal, no thousands separator, exact.
	var capital int
	switch p.kind {
	case kIndividual:
		capital = 1000 * r.between(1, 100)
	case kLimited, kEireli:
		capital = 1000 * r.between(1, 2000)
		if r.per(500) {
			capital = r.between(1_000_000, 90_000_000)
		}
	case kSA:
		capital = r.between(1_000_000, 9_999_999_999)
	case kAssociation, kCondo, kPublic, kOther:
		if r.per(8000) {
			capital = 0
		} else {
			capital = r.between(100, 500_000)
		}
	}
	c := itoaPad(b[:0], capital, 1)
	c = append(c, ',')
	if capital > 0 && r.per(2500) {
		c = itoaPad(c, r.n(100), 2)
	} else {
		c = append(c, '0', '0')
	}
	rc.fb(c)
	porte := "05"
	switch p.kind {
	case kIndividual:
		porte = []string{"01", "01", "01", "01", "03", "00"}[r.n(6)]
	case kLimited, kEireli:
		porte = []string{"01", "01", "01", "03", "05", "05", "00"}[r.n(7)]
	case kSA, kPublic:
		porte = "05"
	case kAssociation, kCondo, kOther:
		porte = []string{"05", "05", "00"}[r.n(3)]
	}
	rc.f(porte)
	ente := ""
	if p.nature[0] == '1' {
		switch p.nature {
		case "1015", "1104":
			ente = "UNIAO"
		default:
			m := brMunicipios[p.mun]
			ente = m.name + " - " + m.uf
		}
	}
	rc.f(ente)
	rc.end()
}

// order returns the order of office k (0 = head office) of the company.
func order(p *plan, k int, b []byte) []byte {
	if k == 0 {
		return append(b, p.headOrder...)
	}
	n := k + 1
	if p.headOrder == "0002" {
		// The head office moved to 0002: the old 0001 is a branch.
		if k == 1 {
			n = 1
		}
	}
	if p.alpha {
		// Alphanumeric companies number their branches in base 36.
		const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		var t [4]byte
		for j := 3; j >= 0; j-- {
			t[j] = digits[n%36]
			n /= 36
		}
		return append(b, t[:]...)
	}
	return itoaPad(b, n, 4)
}
