package graphqlapi

import "strconv"

// ExampleQuery is the query the playground opens with: an establishment,
// its company, the company's members and every company each of them is a
// member of, with a page of that company's offices. taxID should exist in
// the served data.
func ExampleQuery(taxID string) string {
	return `# One office lookup, through its company's members
# to their other companies. Ctrl-Enter runs it.
query Example {
  office(taxId: ` + strconv.Quote(taxID) + `) {
    taxId
    alias
    status { id text }
    address { city state }
    company {
      id
      name
      equity
      members {
        since
        role { text }
        person {
          name
          type
          membership(first: 10) {
            totalCount
            nodes {
              role { text }
              company {
                id
                name
                offices(first: 3) {
                  totalCount
                  nodes { taxId alias head }
                }
              }
            }
          }
        }
      }
    }
  }
}
`
}

// ExampleSearch is the playground's second tab: a search, as GET /office,
// a page at a time.
const ExampleSearch = `# A search, as GET /office: every condition of the filter holds
# (names match whole words, accents and case aside). Follow
# pageInfo.endCursor with after: for the next page.
query Search {
  searchOffices(
    filter: {
      address: {state: {in: ["SP"]}}
      head: {eq: true}
    }
    first: 5
  ) {
    totalCount
    countExact
    nodes {
      taxId
      alias
      address { city state }
      company { name size { acronym } }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`
