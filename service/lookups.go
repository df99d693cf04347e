package service

import (
	"context"
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Office is the office lookup: the office with its company and members,
// plus Simples and state registrations when asked for. Each portal is
// decided on its own: only those whose cached data fails the strategy go
// online.
func (s *Service) Office(ctx context.Context, q OfficeQuery) (model.Office, error) {
	if err := s.officeOptionsServed(q); err != nil {
		return model.Office{}, err
	}
	return metered(ctx, s, KindOffice, func(b *bill) (model.Office, error) { return s.office(ctx, b, q) })
}

func (s *Service) office(ctx context.Context, b *bill, q OfficeQuery) (model.Office, error) {
	lk, err := s.begin(ctx, b, q.TaxID, q.Cache, reads{members: true, simples: q.Simples, history: q.Simples && q.SimplesHistory})
	if err != nil {
		return model.Office{}, err
	}
	o, err := lk.registry(ctx)
	if err != nil {
		return model.Office{}, err
	}
	o.Company.Simples, o.Company.Simei = nil, nil
	if q.Simples {
		rec, err := lk.simples(ctx, q.SimplesHistory)
		if err != nil {
			return model.Office{}, err
		}
		o.Company.Simples, o.Company.Simei = &rec.Simples, &rec.Simei
	}
	if len(q.Registrations) > 0 {
		regs, err := lk.registrations(ctx, q.Registrations, o)
		if err != nil {
			return model.Office{}, err
		}
		o.Registrations = regs
	}
	if err := s.officeExtras(ctx, lk, q, &o); err != nil {
		return model.Office{}, err
	}
	o.Scope, o.Company.Scope = model.ScopeOffice, model.ScopeOffice
	return o, nil
}

// Registry is the federal registry record lookup (/rfb): the same data as
// the office lookup, which REST presents in the registry's own shape.
func (s *Service) Registry(ctx context.Context, q RegistryQuery) (model.Office, error) {
	return metered(ctx, s, KindRegistry, func(b *bill) (model.Office, error) { return s.registry(ctx, b, q) })
}

func (s *Service) registry(ctx context.Context, b *bill, q RegistryQuery) (model.Office, error) {
	lk, err := s.begin(ctx, b, q.TaxID, q.Cache, reads{members: true})
	if err != nil {
		return model.Office{}, err
	}
	o, err := lk.registry(ctx)
	if err != nil {
		return model.Office{}, err
	}
	o.Company.Simples, o.Company.Simei = nil, nil
	return o, nil
}

// Simples is the Simples Nacional / SIMEI lookup for an office's company.
func (s *Service) Simples(ctx context.Context, q SimplesQuery) (model.SimplesRecord, error) {
	return metered(ctx, s, KindSimples, func(b *bill) (model.SimplesRecord, error) { return s.simples(ctx, b, q) })
}

func (s *Service) simples(ctx context.Context, b *bill, q SimplesQuery) (model.SimplesRecord, error) {
	lk, err := s.begin(ctx, b, q.TaxID, q.Cache, reads{simples: true, history: q.History})
	if err != nil {
		return model.SimplesRecord{}, err
	}
	return lk.simples(ctx, q.History)
}

// CompanyAnswer is the company lookup (the company with its Simples,
// members and every office) answered as the bytes render makes of it. A
// company's answer changes only with the snapshot, and one with thousands of
// offices costs milliseconds of SQL and rendering, so the answer is kept
// per snapshot (the least recently used go first; its compressed encodings
// with it, uncounted: a fifth of its size or less) and concurrent misses
// render once. Every call is a company lookup, admitted and priced as such,
// whether its answer was kept or not.
func (s *Service) CompanyAnswer(ctx context.Context, root cnpj.Root, render func(model.Company) ([]byte, error)) (*Answer, error) {
	return metered(ctx, s, KindCompany, func(*bill) (*Answer, error) {
		answer := func() (*Answer, error) {
			c, err := s.company(ctx, root)
			if err != nil {
				return nil, err
			}
			body, err := render(c)
			if err != nil {
				return nil, err
			}
			return &Answer{Body: body}, nil
		}
		snap, ok := s.CurrentSnapshot(ctx)
		if !ok || s.answers == nil {
			return answer()
		}
		key := answerKey{snapshot: snap, root: string(root)}
		if a, hit := s.answers.Get(key); hit {
			return a, nil
		}
		v, err, _ := s.answerFill.Do(strconv.FormatInt(snap, 10)+"/"+string(root), func() (any, error) {
			a, err := answer()
			// A huge answer would push out many: keep those up to an eighth.
			if err == nil && len(a.Body) <= s.answers.Limit()/8 {
				s.answers.Add(key, a, len(a.Body))
			}
			return a, err
		})
		if err != nil {
			return nil, err
		}
		return v.(*Answer), nil
	})
}

// answerKey names a kept company answer.
type answerKey struct {
	snapshot int64
	root     string
}

// company reads a company with its members and offices.
func (s *Service) company(ctx context.Context, root cnpj.Root) (model.Company, error) {
	if _, err := s.snapshot(ctx); err != nil {
		return model.Company{}, err
	}
	l := s.loaders(ctx)
	company := l.Companies.Load(ctx, string(root))
	members := l.Members.Load(ctx, string(root))
	offices := l.CompanyOffices.Load(ctx, string(root))
	c, err := company()
	if err != nil {
		return model.Company{}, storeErr(err, fault.MsgCompanyNotFound)
	}
	if c.Members, err = members(); err != nil {
		return model.Company{}, storeErr(err, "")
	}
	if c.Offices, err = offices(); err != nil {
		return model.Company{}, storeErr(err, "")
	}
	c.Scope = model.ScopeCompany
	return c, nil
}

// CompanyAlone is the company lookup without the members and offices read
// yet: GraphQL reads them through the company's edges (CompanyMembers,
// CompanyOffices), which this lookup covers, only when the query selects
// them.
func (s *Service) CompanyAlone(ctx context.Context, root cnpj.Root) (model.Company, error) {
	return metered(ctx, s, KindCompany, func(*bill) (model.Company, error) {
		c, err := s.companyByRoot(ctx, string(root))
		if err != nil {
			return model.Company{}, err
		}
		c.Scope = model.ScopeCompany
		return c, nil
	})
}

// companyByRoot reads a company through the request's loader.
func (s *Service) companyByRoot(ctx context.Context, root string) (model.Company, error) {
	if _, err := s.snapshot(ctx); err != nil {
		return model.Company{}, err
	}
	c, err := s.loaders(ctx).Companies.Load(ctx, root)()
	if err != nil {
		return model.Company{}, storeErr(err, fault.MsgCompanyNotFound)
	}
	return c, nil
}

// OfficeCompany is the company of an office read by some lookup: it is part
// of that lookup's answer (the office lookup reads it with the office; an
// office of a company's page belongs to that company).
func (s *Service) OfficeCompany(ctx context.Context, o *model.Office) (model.Company, error) {
	if o.Company != nil {
		return *o.Company, nil
	}
	c, err := s.companyByRoot(ctx, o.Root)
	if err != nil {
		return model.Company{}, err
	}
	c.Scope = o.Scope
	return c, nil
}

// MemberCompany is the company a member belongs to, read in the same
// lookup as the member.
func (s *Service) MemberCompany(ctx context.Context, m *model.Member) (model.Company, error) {
	c, err := s.companyByRoot(ctx, m.Root)
	if err != nil {
		return model.Company{}, err
	}
	c.Scope = m.Scope
	return c, nil
}

// edge reads an edge of an object: free when the lookup the object was
// read in covers it (its REST answer includes the edge), otherwise a lookup
// of kind of its own, admitted and priced as such.
func edge[T any](ctx context.Context, s *Service, covered bool, kind Kind, read func() (T, error)) (T, error) {
	if covered {
		return read()
	}
	return metered(ctx, s, kind, func(*bill) (T, error) { return read() })
}

// CompanyMembers is a company's members. The office and company lookups
// include them; a company reached otherwise (a person's membership) makes
// this a company lookup.
func (s *Service) CompanyMembers(ctx context.Context, c *model.Company) ([]model.Member, error) {
	covered := c.Scope == model.ScopeOffice || c.Scope == model.ScopeCompany
	return edge(ctx, s, covered, KindCompany, func() ([]model.Member, error) {
		members := c.Members
		if members == nil {
			var err error
			if members, err = s.loaders(ctx).Members.Load(ctx, c.Root)(); err != nil {
				return nil, storeErr(err, "")
			}
		}
		scope := c.Scope
		if !covered {
			scope = model.ScopeCompany // this read was a company lookup
		}
		out := make([]model.Member, len(members))
		for i, m := range members {
			m.Scope = scope
			out[i] = m
		}
		return out, nil
	})
}

// OfficePage is a page of a company's offices.
type OfficePage = db.OfficePage

// CompanyOffices is a page of a company's offices. The company lookup
// includes them; from anywhere else this is a company lookup.
func (s *Service) CompanyOffices(ctx context.Context, c *model.Company, q OfficePageQuery) (OfficePage, error) {
	return edge(ctx, s, c.Scope == model.ScopeCompany, KindCompany, func() (OfficePage, error) {
		l := s.loaders(ctx)
		// Only the page is read, never the company's thousands of offices.
		p, err := l.OfficePages.Load(ctx, db.PageKey{Root: c.Root, First: q.First, After: q.After})()
		if err != nil {
			return OfficePage{}, storeErr(err, "")
		}
		if len(p.Offices) > 0 && q.Full {
			keys := make([]string, len(p.Offices))
			for i, o := range p.Offices {
				keys[i] = o.TaxID
			}
			full, errs := l.Offices.LoadMany(ctx, keys)()
			for _, err := range errs {
				if err != nil {
					return OfficePage{}, storeErr(err, "")
				}
			}
			p.Offices = full
		}
		offices := make([]model.Office, len(p.Offices))
		for i, o := range p.Offices {
			if o.Company != nil { // the loader's value is shared: copy before marking it
				company := *o.Company
				company.Scope = model.ScopeCompany
				o.Company = &company
			}
			o.Scope = model.ScopeCompany
			offices[i] = o
		}
		p.Offices = offices
		return p, nil
	})
}

// Person is the person lookup as REST answers it: the person and every
// membership.
func (s *Service) Person(ctx context.Context, id string) (model.Person, error) {
	return metered(ctx, s, KindPerson, func(*bill) (model.Person, error) {
		if _, err := s.snapshot(ctx); err != nil {
			return model.Person{}, err
		}
		l := s.loaders(ctx)
		person := l.Persons.Load(ctx, id)
		memberships := l.Memberships.Load(ctx, id)
		p, err := person()
		if err != nil {
			return model.Person{}, storeErr(err, fault.MsgPersonNotFound)
		}
		if p.Membership, err = memberships(); err != nil {
			return model.Person{}, storeErr(err, "")
		}
		p.Scope = model.ScopePerson
		return p, nil
	})
}

// PersonAlone is the person lookup without the memberships read yet:
// GraphQL pages them through PersonMemberships, which this lookup covers.
func (s *Service) PersonAlone(ctx context.Context, id string) (model.Person, error) {
	return metered(ctx, s, KindPerson, func(*bill) (model.Person, error) {
		if _, err := s.snapshot(ctx); err != nil {
			return model.Person{}, err
		}
		p, err := s.loaders(ctx).Persons.Load(ctx, id)()
		if err != nil {
			return model.Person{}, storeErr(err, fault.MsgPersonNotFound)
		}
		p.Scope = model.ScopePerson
		return p, nil
	})
}

// MembershipPage is a page of a person's memberships.
type MembershipPage = db.MembershipPage

// PersonMemberships is a page of a person's memberships, each with its
// company. The person lookup includes them; from anywhere else (a member's
// person) this is a person lookup.
func (s *Service) PersonMemberships(ctx context.Context, p *model.Person, q MembershipPageQuery) (MembershipPage, error) {
	return edge(ctx, s, p.Scope == model.ScopePerson, KindPerson, func() (MembershipPage, error) {
		key := db.MembershipPageKey{PersonID: p.ID, First: q.First, AfterRoot: q.AfterRoot, AfterPosition: q.AfterPosition,
			NoTotal: q.NoTotal, NoSimples: q.NoSimples}
		page, err := s.membershipPage(ctx, key)
		if err != nil {
			return MembershipPage{}, err
		}
		// The companies came with the person lookup, not with their own:
		// their members and offices are company lookups.
		ms := make([]model.Membership, len(page.Memberships))
		for i, m := range page.Memberships {
			m.Company.Scope = model.ScopeNone
			ms[i] = m
		}
		page.Memberships = ms
		return page, nil
	})
}

// membershipPage reads a page of a person's memberships: from the office
// lookup that listed the person as a member of its company alone (most
// persons), else through the request's loader.
func (s *Service) membershipPage(ctx context.Context, key db.MembershipPageKey) (MembershipPage, error) {
	if sole, ok := loaders.Sole(ctx, key.PersonID); ok {
		if page, ok := sole.Page(key); ok {
			return page, nil
		}
	}
	page, err := s.loaders(ctx).MembershipPages.Load(ctx, key)()
	if err != nil {
		return MembershipPage{}, storeErr(err, "")
	}
	return page, nil
}
