package generator

import (
	"io"
)

func (g *gen) writeSocios(w io.Writer, lo, hi int) (int, error) {
	var rc rec
	n := 0
	for i := lo; i < hi; i++ {
		p := g.plan(i)
		n += g.socios(&rc, &p)
		if err := rc.flush(w, false); err != nil {
			return n, err
		}
	}
	return n, rc.flush(w, true)
}

type memberKind int

const (
	mNatural        memberKind = iota
	mShared                    // natural person from the shared pool
	mLegal                     // another company of the dump
	mForeignCompany            // identificador 3, qualificação 37
	mForeignPerson             // identificador 2, qualificação 38
	mLegacy                    // natural person with the legacy qualificação 36
	mWithAgent                 // natural minor with a parent as representative
)

// anchorMemberKinds are the partners of anchorMembers: one of every kind.
var anchorMemberKinds = []memberKind{mShared, mLegal, mForeignCompany, mForeignPerson, mLegacy, mWithAgent, mNatural}

func maskedCPF(b []byte, r *rng) []byte {
	b = append(b, "***"...)
	b = r.digits(b, 6)
	return append(b, "**"...)
}

// poolPerson is natural person k of the shared pool: same name, masked CPF
// and age band wherever it appears, so its person id is shared.
func (g *gen) poolPerson(k int) (name string, cpf []byte, band byte) {
	r := g.rng(sPool, k)
	name = personName(r)
	cpf = maskedCPF(nil, r)
	band = byte('3' + r.n(6))
	return
}

// socios writes the company's partners and returns how many.
func (g *gen) socios(rc *rec, p *plan) int {
	r := g.rng(sMember, p.i)
	var b [48]byte
	for k := 0; k < p.partners; k++ {
		mk := mNatural
		if p.i == anchorMembers {
			mk = anchorMemberKinds[k%len(anchorMemberKinds)]
		} else {
			x := r.n(1000)
			switch {
			case x < 130:
				mk = mShared
			case x < 190:
				mk = mLegal
			case x < 210:
				mk = mForeignCompany
			case x < 230:
				mk = mForeignPerson
			case x < 235:
				mk = mLegacy
			case x < 255:
				mk = mWithAgent
			}
		}
		if mk == mLegal && g.n < 2 {
			mk = mNatural
		}
		rc.f(p.root)
		// the partner's role, by the company's kind
		role := "22"
		switch p.kind {
		case kLimited:
			if k == 0 || r.per(3000) {
				role = "49"
			}
		case kEireli:
			role = "65"
		case kSA:
			role = []string{"10", "16", "05", "08"}[r.n(4)]
		case kAssociation:
			role = []string{"16", "10", "05", "54"}[r.n(4)]
		case kCondo:
			role = "19"
		case kPublic:
			role = []string{"05", "16"}[r.n(2)]
		}
		band := byte('0')
		country := ""
		agent := false
		switch mk {
		case mNatural, mLegacy, mWithAgent:
			rc.f("2")
			rc.f(personName(r))
			rc.fb(maskedCPF(b[:0], r))
			band = byte('3' + r.n(6))
			if r.per(300) {
				band = byte('1' + r.n(9))
			}
			if r.per(300) {
				band = '0'
			}
			if mk == mLegacy {
				role = legacyQualificacao
			}
			if mk == mWithAgent {
				band = byte('1' + r.n(2)) // a minor, represented by a parent
				agent = true
			}
		case mShared:
			name, cpf, pb := g.poolPerson(r.n(g.pool))
			rc.f("2")
			rc.f(name)
			rc.fb(cpf)
			band = pb
		case mLegal:
			j := r.n(g.n)
			if j == p.i {
				j = (j + 1) % g.n
			}
			q := g.plan(j)
			rc.f("1")
			rc.f(q.name)
			rc.f(g.headCNPJ(j))
			role = "22" // a legal person is a plain sócio, never an administrator
		case mForeignCompany:
			rc.f("3")
			rc.f(r.pick(foreignCompanies))
			rc.f("")
			role = "37"
			agent = r.per(6000)
		case mForeignPerson:
			rc.f("2")
			rc.f(r.pick(foreignNames))
			rc.fb(maskedCPF(b[:0], r))
			role = "38"
			band = byte('3' + r.n(6))
			agent = r.per(6000)
		}
		if mk == mForeignCompany || mk == mForeignPerson {
			if r.per(1000) {
				country = r.pick(unknownPaises)
			} else {
				country = r.pick(foreignPaises)
			}
		}
		rc.f(role)
		if r.per(20) {
			rc.f(nullDate(r))
		} else {
			rc.fb(appendDate(b[:0], r.between(p.founded, g.dumpDays)))
		}
		rc.f(country)
		if !agent && r.per(300) && mk != mLegal {
			agent = true
		}
		if agent {
			rc.fb(maskedCPF(b[:0], r))
			rc.f(personName(r))
			switch {
			case mk == mWithAgent:
				rc.f([]string{"14", "15"}[r.n(2)])
			default:
				rc.f("17")
			}
		} else {
			rc.f("***000000**")
			rc.f("")
			rc.f("00")
		}
		if mk == mLegal || mk == mForeignCompany {
			band = '0'
		}
		rc.fb([]byte{band})
		rc.end()
	}
	return p.partners
}

func (g *gen) writeSimples(w io.Writer, lo, hi int) (int, error) {
	var rc rec
	n := 0
	for i := lo; i < hi; i++ {
		p := g.plan(i)
		if g.simples(&rc, &p) {
			n++
		}
		if err := rc.flush(w, false); err != nil {
			return n, err
		}
	}
	return n, rc.flush(w, true)
}

// simplesStart is when the Simples Nacional began (2007-07-01); SIMEI began
// 2009-07-01.
const (
	simplesStart = 13695
	meiStart     = 14426
)

// simples writes the company's Simples row, if it has one.
func (g *gen) simples(rc *rec, p *plan) bool {
	r := g.rng(sSimples, p.i)
	var eligible bool
	none := 0
	switch p.kind {
	case kIndividual:
		eligible, none = true, 300
	case kLimited, kEireli:
		eligible, none = true, 1200
	}
	if !eligible || r.per(none) {
		return false
	}
	var b [16]byte
	zero := "00000000"
	since := max(p.founded, simplesStart)
	rc.f(p.root)
	x := r.n(100)
	option := "S"
	switch {
	case x < 2:
		option = ""
	case x < 40:
		option = "N"
	}
	rc.f(option)
	switch option {
	case "S":
		rc.fb(appendDate(b[:0], r.between(since, g.dumpDays)))
		rc.f(zero)
	case "N":
		start := r.between(since, g.dumpDays)
		rc.fb(appendDate(b[:0], start))
		rc.fb(appendDate(b[:0], r.between(start, g.dumpDays)))
	default:
		rc.f(zero)
		rc.f(zero)
	}
	meiSince := max(since, meiStart)
	switch {
	case p.kind == kIndividual && option == "S" && r.per(6500):
		rc.f("S")
		rc.fb(appendDate(b[:0], r.between(meiSince, g.dumpDays)))
		rc.f(zero)
	case p.kind == kIndividual && r.per(4000):
		start := r.between(meiSince, g.dumpDays)
		rc.f("N")
		rc.fb(appendDate(b[:0], start))
		rc.fb(appendDate(b[:0], r.between(start, g.dumpDays)))
	case option == "":
		rc.f("")
		rc.f(zero)
		rc.f(zero)
	default:
		rc.f("N")
		rc.f(zero)
		rc.f(zero)
	}
	rc.end()
	return true
}

// samples describes a handful of offices that illustrate the features, for
// round-trip tests.
func (g *gen) samples() []SampleOffice {
	type pick struct {
		i, office int
		why       string
	}
	var picks []pick
	add := func(i, office int, why string) {
		if i < g.n {
			picks = append(picks, pick{i, office, why})
		}
	}
	add(0, 0, "first company")
	add(anchorAlpha, 0, "alphanumeric root")
	add(anchorHead2, 0, "head office with order 0002")
	add(anchorHead2, 1, "closed branch 0001 of a company whose head office is 0002")
	add(anchorAbroad, 0, "head office abroad")
	add(anchorMembers, 0, "partners of every kind")
	if len(g.big) > 0 {
		add(g.big[0], g.bigOff[0]-1, "last branch of a company with many offices")
	}
	add(g.n-1, 0, "last company")
	var out []SampleOffice
	for _, pk := range picks {
		p := g.plan(pk.i)
		var rc rec
		rc.keep = true
		g.empresa(&rc, &p)
		company := rc.rows[0]
		rc = rec{}
		_, _ = g.offices(&rc, &p, pk.office, io.Discard)
		office := rc.rows[0]
		rc = rec{keep: true}
		g.socios(&rc, &p)
		members := rc.rows
		rc = rec{keep: true}
		var simples []string
		if g.simples(&rc, &p) {
			simples = rc.rows[0]
		}
		s := SampleOffice{
			Why:          pk.why,
			TaxID:        office[0] + office[1] + office[2],
			Root:         office[0],
			Head:         office[3] == "1",
			Name:         company[1],
			Alias:        office[4],
			Status:       office[5],
			Municipality: office[20],
			Company:      company,
			Office:       office,
			Members:      members,
			Simples:      simples,
		}
		for _, m := range municipios {
			if m.rfb == s.Municipality && m.tabmun {
				s.IBGE = m.ibge
			}
		}
		out = append(out, s)
	}
	return out
}
