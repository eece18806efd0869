package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/syncmem/syncmem/pkg/genl"
)

// The grammar every verb shares, the way iproute2's rdma, devlink and ip
// read their command lines: a device is "dev DEV" (or --dev DEV), a client
// "id ID" (or --id ID; several as "id 3,4" or "id 3 id 4"), and every other
// option of a verb is a keyword too, with its value after it ("dir to-cpu",
// "latency 200us") or alone for a switch ("lazy", "per-client"). Keywords
// and flags mix freely; -j and -p are global; unambiguous prefixes of the
// verbs work (syncmemctl li).

// keywordArgs is the cobra.PositionalArgs of every verb: the words after
// the verb are its keywords, each setting the flag of that name.
//
// Cobra parses the flags first, so a keyword may not set a flag that was
// given as one too: the order of a list (the ids of a batch) would not be
// the command line's.
func keywordArgs(cmd *cobra.Command, args []string) error {
	flagged := map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { flagged[f.Name] = true })
	for i := 0; i < len(args); i++ {
		word := args[i]
		f := keywordFlag(cmd, word)
		if f == nil {
			return unknownKeyword(cmd, word)
		}
		if flagged[f.Name] {
			return fmt.Errorf("%s is given both as --%s and as a keyword", word, f.Name)
		}
		value := f.NoOptDefVal // a switch
		if value == "" {
			if i+1 == len(args) {
				return fmt.Errorf("%s needs a value: %s %s", word, word, valueName(f))
			}
			i++
			value = args[i]
		}
		if f.Changed && !isList(f) {
			return fmt.Errorf("%s is given twice", word)
		}
		if err := cmd.Flags().Set(f.Name, value); err != nil {
			return fmt.Errorf("invalid %s %q: %v", word, value, err)
		}
	}
	return nil
}

// keywordFlag is the flag a keyword sets: one of the verb's own, visible
// flags, by its full name.
func keywordFlag(cmd *cobra.Command, word string) *pflag.Flag {
	f := cmd.LocalNonPersistentFlags().Lookup(word)
	if f == nil || f.Hidden || word == "help" {
		return nil
	}
	return f
}

// keywords lists a verb's keywords.
func keywords(cmd *cobra.Command) []string {
	var names []string
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	return names
}

func isList(f *pflag.Flag) bool { return strings.HasSuffix(f.Value.Type(), "Slice") }

// valueName is what a keyword's value is called in messages: DEV, ID.
func valueName(f *pflag.Flag) string { return strings.ToUpper(f.Name) }

// unknownKeyword refuses word; a number, or any word while no device is
// named, is taken for a client or device named the old way, and the
// message says how to name it.
func unknownKeyword(cmd *cobra.Command, word string) error {
	hint := ""
	if strings.Trim(word, "0123456789,") == "" && keywordFlag(cmd, "id") != nil {
		hint = fmt.Sprintf(" (a client is named \"id %s\" or --id %s)", word, word)
	} else if dev := keywordFlag(cmd, "dev"); dev != nil && !dev.Changed {
		hint = fmt.Sprintf(" (a device is named \"dev %s\" or --dev %s)", word, word)
	}
	return fmt.Errorf("%s: unknown keyword %q%s; keywords: %s", cmd.CommandPath(), word, hint,
		strings.Join(keywords(cmd), ", "))
}

// completeKeywords completes a verb's keywords and, after one that takes
// a value, the value with the flag's own completion (devices, client ids,
// directions).
func completeKeywords(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if f := pendingKeyword(cmd, args); f != nil {
		if fn, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
			return fn(cmd, args, toComplete)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, k := range keywords(cmd) {
		f := keywordFlag(cmd, k)
		if (isList(f) || !f.Changed && !slices.Contains(args, k)) && strings.HasPrefix(k, toComplete) {
			out = append(out, cobra.CompletionWithDesc(k, f.Usage))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// pendingKeyword is the keyword that args end with, still waiting for its
// value, or nil.
func pendingKeyword(cmd *cobra.Command, args []string) *pflag.Flag {
	for i := 0; i < len(args); i++ {
		f := keywordFlag(cmd, args[i])
		if f == nil || f.NoOptDefVal != "" {
			continue
		}
		if i+1 == len(args) {
			return f
		}
		i++
	}
	return nil
}

// verb sets up what every verb shares: keywords, their completion, and
// the usage line that shows them.
func verb(cmd *cobra.Command) *cobra.Command {
	cmd.Args = keywordArgs
	cmd.ValidArgsFunction = completeKeywords
	cmd.DisableFlagsInUseLine = true
	return cmd
}

// devFlag is the device of a verb: --dev DEV, or the keyword dev DEV.
func devFlag(cmd *cobra.Command, dev *string, usage string, dial dialer) {
	cmd.Flags().StringVar(dev, "dev", "", usage)
	if dial != nil {
		_ = cmd.RegisterFlagCompletionFunc("dev", completeDevices(dial))
	}
}

// ownerFlag is the in-kernel owner a verb selects clients by: --owner
// OWNER, or the keyword owner OWNER.
func ownerFlag(cmd *cobra.Command, owner *string, usage string, dial dialer) {
	cmd.Flags().StringVar(owner, "owner", "", usage)
	if dial != nil {
		_ = cmd.RegisterFlagCompletionFunc("owner", completeOwners(dial))
	}
}

// idFlag is the client or clients of a verb: --id ID, repeated or
// comma-separated, or the keyword id ID.
func idFlag(cmd *cobra.Command, ids *[]string, usage string, dial dialer) {
	cmd.Flags().StringSliceVar(ids, "id", nil, usage)
	if dial != nil {
		_ = cmd.RegisterFlagCompletionFunc("id", completeClients(dial))
	}
}

// dirFlag is the sync direction of a verb: --dir DIR, or the keyword dir
// DIR; to-device unless given (parseDir reads it).
func dirFlag(cmd *cobra.Command, dir *string, usage string) {
	cmd.Flags().StringVar(dir, "dir", genl.DirToDevice.String(), usage+": "+genl.DirectionNames())
	var dirs []string
	for _, d := range genl.Directions() {
		dirs = append(dirs, d.String())
	}
	_ = cmd.RegisterFlagCompletionFunc("dir", cobra.FixedCompletions(dirs, cobra.ShellCompDirectiveNoFileComp))
}

// rangeFlags are the bytes of one client a verb works on: offset BYTES
// and len BYTES, or --offset and --len (parseRange reads them).
func rangeFlags(cmd *cobra.Command, offset, length *string, what string) {
	f := cmd.Flags()
	f.StringVar(offset, "offset", "", "with id: the first byte "+what+" (default 0; needs len)")
	f.StringVar(length, "len", "", "with id: how many bytes "+what+", from offset (4096, 64K, 1MiB)")
}
