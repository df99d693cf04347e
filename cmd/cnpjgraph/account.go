package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/service"
)

func init() {
	commands["account"] = runAccount
	commands["key"] = runKey
	commands["plan"] = runPlan
}

var accountUsage = `Usage:
  cnpjgraph account create NAME [--plan free] [--permissions LIST] [--no-key]
  cnpjgraph account list
  cnpjgraph account show ACCOUNT
  cnpjgraph account suspend ACCOUNT --reason TEXT
  cnpjgraph account resume ACCOUNT
  cnpjgraph account grant ACCOUNT [--credits N] [--plan NAME] [--permissions LIST|all]
  cnpjgraph account usage ACCOUNT [--days 7]
  cnpjgraph account token ACCOUNT [--ttl 1h] [--permissions LIST]   (needs JWT_SECRET)
  cnpjgraph account sign ACCOUNT PATH?QUERY --key KEY_ID [--ttl 2160h]   (needs SIGNING_KEY)

ACCOUNT is an account id or name. LIST is comma-separated: ` + strings.Join(service.Permissions, ",") + `.
sign: the link opens the file route as key KEY_ID would, for as long as the key
may (revoked, or its account suspended, the link is refused).
grant --credits adds credits to today's balance, or takes them back when negative (down
to 0; the daily refill at 00:00 UTC resets it to the plan allowance); a lasting change is
grant --plan.
`

const keyUsage = `Usage:
  cnpjgraph key add ACCOUNT [--name NAME] [--permissions LIST]   prints the key, once
  cnpjgraph key list ACCOUNT
  cnpjgraph key revoke KEY_ID
`

const planUsage = `Usage:
  cnpjgraph plan list
  cnpjgraph plan set NAME --credits PER_DAY --rate PER_MINUTE
`

// parseInterspersed parses flags placed before, between or after the
// positional arguments, which the flag package alone stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) []string {
	var pos []string
	for {
		_ = fs.Parse(args) // ExitOnError
		args = fs.Args()
		if len(args) == 0 {
			return pos
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// permissionsFlag turns "" or "all" into nil (every permission) and a list
// into validated names.
func permissionsFlag(v string) ([]string, error) {
	if v == "" || v == "all" {
		return nil, nil
	}
	p, err := auth.ParsePermissions(strings.Split(v, ","))
	if err != nil {
		return nil, err
	}
	return p.Names(), nil
}

func permissionsText(names []string) string {
	if names == nil {
		return "all"
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

func subcommand(args []string, usage string) (string, []string, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(usage)
		if len(args) == 0 {
			return "", nil, errors.New("missing subcommand")
		}
		return "", nil, nil
	}
	return args[0], args[1:], nil
}

func table() *tabwriter.Writer { return tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0) }

func runAccount(ctx context.Context, args []string) error {
	sub, args, err := subcommand(args, accountUsage)
	if sub == "" {
		return err
	}
	fs := flag.NewFlagSet("account "+sub, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, accountUsage) }
	plan := fs.String("plan", "", "plan name")
	perms := fs.String("permissions", "", "comma-separated permissions, or all")
	noKey := fs.Bool("no-key", false, "create the account without an API key")
	reason := fs.String("reason", "", "suspension reason, shown to the account's clients")
	credits := fs.Int64("credits", 0, "credits to add to today's balance")
	days := fs.Int("days", 7, "days of usage to sum")
	ttl := fs.Duration("ttl", 0, "lifetime of the token or signed URL")
	keyID := fs.Int64("key", 0, "sign: the id of the API key the link opens as (cnpjgraph key list ACCOUNT)")
	pos := parseInterspersed(fs, args)
	if !strings.Contains(" create list show suspend resume grant usage token sign ", " "+sub+" ") {
		fs.Usage()
		return fmt.Errorf("unknown subcommand %q", sub)
	}
	// A lifetime of 0 or less would print what is refused at once.
	set := flagsSet(fs)
	if *ttl < 0 || set["ttl"] && *ttl == 0 {
		return fmt.Errorf("%s: --ttl must be a positive duration (given %s)", sub, *ttl)
	}
	need := func(n int) error {
		if len(pos) != n {
			fs.Usage()
			return fmt.Errorf("%s: expected %d argument(s), got %d", sub, n, len(pos))
		}
		return nil
	}

	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	now := time.Now()
	find := func() (auth.Account, error) { return auth.FindAccount(ctx, d, pos[0], now) }

	switch sub {
	case "create":
		if err := need(1); err != nil {
			return err
		}
		p, err := permissionsFlag(*perms)
		if err != nil {
			return err
		}
		a, err := auth.CreateAccount(ctx, d, pos[0], *plan, p, now)
		if err != nil {
			return err
		}
		fmt.Printf("account %d %q created on plan %s with %d credits\n", a.ID, a.Name, a.Plan, a.Credits)
		if !*noKey {
			return printNewKey(ctx, d, a.ID, "default", nil)
		}
		return nil
	case "list":
		accts, err := auth.Accounts(ctx, d, now)
		if err != nil {
			return err
		}
		w := table()
		fmt.Fprintln(w, "ID\tNAME\tPLAN\tSTATUS\tCREDITS TODAY\tPERMISSIONS\tCREATED")
		for _, a := range accts {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", a.ID, a.Name, a.Plan, statusText(a), a.Credits, permissionsText(a.Permissions), a.CreatedAt.UTC().Format("2006-01-02"))
		}
		return w.Flush()
	case "show":
		if err := need(1); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		plans, err := auth.Plans(ctx, d)
		if err != nil {
			return err
		}
		w := table()
		fmt.Fprintf(w, "id\t%d\nname\t%s\n", a.ID, a.Name)
		for _, p := range plans {
			if p.Name == a.Plan {
				fmt.Fprintf(w, "plan\t%s (%d credits/day, %d requests/minute)\n", p.Name, p.CreditsPerDay, p.RequestsPerMinute)
			}
		}
		fmt.Fprintf(w, "status\t%s\ncredits today\t%d\npermissions\t%s\ncreated\t%s\n", statusText(a), a.Credits, permissionsText(a.Permissions), a.CreatedAt.UTC().Format(time.RFC3339))
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Println()
		return printKeys(ctx, d, a.ID)
	case "suspend":
		if err := need(1); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		if err := auth.Suspend(ctx, d, a.ID, *reason); err != nil {
			return err
		}
		fmt.Printf("account %d suspended: %s\n", a.ID, *reason)
		return nil
	case "resume":
		if err := need(1); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		if err := auth.Resume(ctx, d, a.ID); err != nil {
			return err
		}
		fmt.Printf("account %d active\n", a.ID)
		return nil
	case "grant":
		if err := need(1); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		if !set["credits"] && !set["plan"] && !set["permissions"] {
			fs.Usage()
			return errors.New("grant: give --credits, --plan or --permissions")
		}
		if set["plan"] {
			if err := auth.ChangePlan(ctx, d, a.ID, *plan, now); errors.Is(err, auth.ErrNotFound) {
				// The account was found above: the plan is what is missing.
				return fmt.Errorf("plan %q: not found (cnpjgraph plan list)", *plan)
			} else if err != nil {
				return err
			}
		}
		if set["credits"] {
			if err := auth.GrantCredits(ctx, d, a.ID, *credits, now); err != nil {
				return err
			}
		}
		if set["permissions"] {
			p, err := permissionsFlag(*perms)
			if err != nil {
				return err
			}
			if err := auth.SetAccountPermissions(ctx, d, a.ID, p); err != nil {
				return err
			}
		}
		a, err = find()
		if err != nil {
			return err
		}
		fmt.Printf("account %d: plan %s, %d credits today, permissions %s\n", a.ID, a.Plan, a.Credits, permissionsText(a.Permissions))
		return nil
	case "usage":
		if err := need(1); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		if *days < 1 {
			return fmt.Errorf("usage: --days %d: give 1 (today) or more", *days)
		}
		since := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-*days)
		rows, err := auth.AccountUsage(ctx, d, a.ID, since)
		if err != nil {
			return err
		}
		fmt.Printf("account %d %q: usage since %s (UTC)\n", a.ID, a.Name, since.Format("2006-01-02"))
		w := table()
		fmt.Fprintln(w, "DAY\tROUTE\tREQUESTS\tERRORS\tCREDITS")
		var req, errs, cr int64
		for _, u := range rows {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\n", u.Day.Format("2006-01-02"), u.Route, u.Requests, u.Errors, u.Credits)
			req, errs, cr = req+u.Requests, errs+u.Errors, cr+u.Credits
		}
		fmt.Fprintf(w, "total\t\t%d\t%d\t%d\n", req, errs, cr)
		return w.Flush()
	case "token", "sign":
		want := 1
		if sub == "sign" {
			want = 2
		}
		if err := need(want); err != nil {
			return err
		}
		a, err := find()
		if err != nil {
			return err
		}
		conf := loadConfig()
		if sub == "sign" && conf.Auth.SigningKey == "" {
			return errors.New("SIGNING_KEY is not set: a signed URL would not verify on the server")
		}
		if a.Status != "active" {
			// Made all the same: it opens once the account is resumed.
			fmt.Fprintf(os.Stderr, "warning: account %d is %s: what is printed is refused until `cnpjgraph account resume %s`\n",
				a.ID, statusText(a), a.Name)
		}
		// Its warnings are about serving (a missing SIGNING_KEY, Redis),
		// not about the token or link printed here.
		cfg := authConfig(conf.Auth, d, slog.New(slog.DiscardHandler))
		cfg.RedisURL = ""
		svc, err := auth.New(ctx, cfg)
		if err != nil {
			return err
		}
		defer svc.Close()
		if sub == "token" {
			p, err := permissionsFlag(*perms)
			if err != nil {
				return err
			}
			if *ttl == 0 {
				*ttl = time.Hour
			}
			tok, err := svc.IssueJWT(a.ID, p, *ttl)
			if err != nil {
				return err
			}
			fmt.Println(tok)
			return nil
		}
		u, err := url.Parse(pos[1])
		if err != nil {
			return err
		}
		if err := signableBy(ctx, d, a, *keyID, u.Path); err != nil {
			return err
		}
		if *ttl == 0 {
			*ttl = 90 * 24 * time.Hour
		}
		fmt.Println(svc.SignURL(u.Path, u.Query(), *keyID, now.Add(*ttl)))
		return nil
	}
	fs.Usage()
	return fmt.Errorf("unknown subcommand %q", sub)
}

// signableBy refuses a link that would not open: a path no signed URL
// opens, or a key that is not the account's, is revoked, or lacks the
// route's permission.
func signableBy(ctx context.Context, d *sqlx.DB, a auth.Account, keyID int64, path string) error {
	perm := auth.FilePermission(path)
	if perm == "" {
		return fmt.Errorf("sign: %s: a signed URL opens only /rfb/certificate, /simples/certificate, /office/TAXID/map and /office/TAXID/street", path)
	}
	if keyID == 0 {
		return errors.New("sign: name the key the link opens as: --key KEY_ID (cnpjgraph key list " + a.Name + ")")
	}
	keys, err := auth.Keys(ctx, d, a.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID != keyID {
			continue
		}
		switch {
		case k.RevokedAt != nil:
			return fmt.Errorf("sign: key %d is revoked", keyID)
		case !auth.KeyHolds(a, k, perm):
			return fmt.Errorf("sign: key %d lacks %s: the link would be refused", keyID, perm)
		}
		return nil
	}
	return fmt.Errorf("sign: account %d has no key %d (cnpjgraph key list %s)", a.ID, keyID, a.Name)
}

func statusText(a auth.Account) string {
	if a.SuspensionReason != nil {
		return a.Status + " (" + *a.SuspensionReason + ")"
	}
	return a.Status
}

func printNewKey(ctx context.Context, d *sqlx.DB, accountID int64, name string, perms []string) error {
	k, secret, err := auth.AddKey(ctx, d, accountID, name, perms)
	if err != nil {
		return err
	}
	shown := strconv.Quote(k.Name)
	if k.Name == "" {
		shown = "(no name: --name gives one)"
	}
	fmt.Printf("key %d %s (permissions: %s). It is shown only now; store it safely:\n\n  %s\n\n", k.ID, shown, permissionsText(k.Permissions), secret)
	return nil
}

func printKeys(ctx context.Context, d *sqlx.DB, accountID int64) error {
	keys, err := auth.Keys(ctx, d, accountID)
	if err != nil {
		return err
	}
	w := table()
	fmt.Fprintln(w, "KEY ID\tPREFIX\tNAME\tPERMISSIONS\tCREATED\tREVOKED")
	for _, k := range keys {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%d\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, permissionsText(k.Permissions), k.CreatedAt.UTC().Format("2006-01-02 15:04"), revoked)
	}
	return w.Flush()
}

func runKey(ctx context.Context, args []string) error {
	sub, args, err := subcommand(args, keyUsage)
	if sub == "" {
		return err
	}
	fs := flag.NewFlagSet("key "+sub, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, keyUsage) }
	name := fs.String("name", "", "a name to tell the key apart")
	perms := fs.String("permissions", "", "restrict the key to these permissions (default: all the account holds)")
	pos := parseInterspersed(fs, args)
	if len(pos) != 1 || (sub != "add" && sub != "list" && sub != "revoke") {
		fs.Usage()
		return fmt.Errorf("key %s: expected one argument", sub)
	}
	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	if sub == "revoke" {
		id, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil {
			return fmt.Errorf("key revoke: %q is not a key id (see cnpjgraph key list ACCOUNT)", pos[0])
		}
		if err := auth.RevokeKey(ctx, d, id, time.Now()); err != nil {
			return err
		}
		fmt.Printf("key %d revoked (servers stop accepting it within AUTH_KEY_CACHE_TTL)\n", id)
		return nil
	}
	a, err := auth.FindAccount(ctx, d, pos[0], time.Now())
	if err != nil {
		return err
	}
	if sub == "list" {
		return printKeys(ctx, d, a.ID)
	}
	p, err := permissionsFlag(*perms)
	if err != nil {
		return err
	}
	return printNewKey(ctx, d, a.ID, *name, p)
}

func runPlan(ctx context.Context, args []string) error {
	sub, args, err := subcommand(args, planUsage)
	if sub == "" {
		return err
	}
	fs := flag.NewFlagSet("plan "+sub, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, planUsage) }
	credits := fs.Int64("credits", -1, "credits per day")
	rate := fs.Int("rate", 0, "requests per minute")
	pos := parseInterspersed(fs, args)
	if sub != "list" && sub != "set" {
		fs.Usage()
		return fmt.Errorf("unknown subcommand %q", sub)
	}
	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	switch sub {
	case "list":
		plans, err := auth.Plans(ctx, d)
		if err != nil {
			return err
		}
		w := table()
		fmt.Fprintln(w, "PLAN\tCREDITS/DAY\tREQUESTS/MINUTE")
		for _, p := range plans {
			fmt.Fprintf(w, "%s\t%d\t%d\n", p.Name, p.CreditsPerDay, p.RequestsPerMinute)
		}
		return w.Flush()
	case "set":
		if len(pos) != 1 || *credits == -1 || *rate == 0 {
			fs.Usage()
			return errors.New("plan set: give NAME, --credits and --rate")
		}
		if *credits < 0 || *rate < 0 {
			return fmt.Errorf("plan set: --credits must be 0 or more and --rate 1 or more (given %d and %d)", *credits, *rate)
		}
		if err := auth.SetPlan(ctx, d, auth.Plan{Name: pos[0], CreditsPerDay: *credits, RequestsPerMinute: *rate}); err != nil {
			return err
		}
		fmt.Printf("plan %s: %d credits/day, %d requests/minute\n", pos[0], *credits, *rate)
		return nil
	}
	fs.Usage()
	return fmt.Errorf("unknown subcommand %q", sub)
}
