package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as the `wicket` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"wicket": func() {
			os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the txtar scripts in testdata/script: the commands a
// person types, end to end.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script",
		Setup: func(env *testscript.Env) error {
			// Scripts start with no project and no keys from the host.
			env.Setenv("WICKET_PROJECT", "")
			env.Setenv("WICKET_NODE_OBSERVE_KEY", "")
			env.Setenv("WICKET_NODE_CONTROL_KEY", "")
			env.Setenv("WICKET_DATA_TOKEN", "")
			env.Setenv("WICKET_LEDGER_KEY", "")
			env.Setenv("WICKET_ALPACA_KEY_ID", "")
			env.Setenv("WICKET_ALPACA_SECRET_KEY", "")
			env.Setenv("WICKET_OPERATOR_KEY", "")
			env.Values[scriptTBKey{}] = env.T() // for the nodetest command
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"nodetest":     cmdNodetest,     // a real node for the rest of the script: $NODE and its keys
			"jsondrop":     cmdJSONDrop,     // drop top-level keys from a JSON result (and mask proof seeds) before cmp
			"deadnode":     cmdDeadnode,     // $DEADNODE: a loopback address where nothing listens
			"nodeaddr":     cmdNodeaddr,     // point ./wicket.toml's [node] address elsewhere
			"fakeprovider": cmdFakeProvider, // fake Binance and Alpaca data APIs in wicket.toml (data_script_test.go)
			"fakefunding":  cmdFakeFunding,  // fake Binance funding-rate history in wicket.toml (data_funding_test.go)
		},
	})
}
