package evaldynamic

import (
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/sim"
)

// With several feedback protocols a method has one row per protocol: the table names its rows
// by protocol and method (two key columns), so a cell-by-cell check can tell them apart.
func TestTable2KeysRowsByProtocolAndMethod(t *testing.T) {
	cfg := &Config{
		Protocols: []sim.Protocol{{Name: "execution", Kind: sim.ProtocolExecution}, {Name: "task", Kind: sim.ProtocolTask}},
		Policies:  []bandit.Spec{{Name: "Static", Kind: "static"}},
		Scenarios: []sim.Scenario{{Name: "persistent-20"}},
	}
	cfg.Dynamic.Seeds = []uint64{1}
	tab := Table2(cfg, nil, WorldInfo{})
	if tab.Keys() != 2 || len(tab.Rows) != 2 || tab.RowKey(tab.Rows[0]) != "execution / Static" || tab.RowKey(tab.Rows[1]) != "task / Static" {
		t.Fatalf("keys %d, rows %q", tab.Keys(), tab.Rows)
	}
	cfg.Protocols = cfg.Protocols[:1]
	if tab = Table2(cfg, nil, WorldInfo{}); tab.Keys() != 1 || tab.RowKey(tab.Rows[0]) != "Static" {
		t.Fatalf("one protocol: keys %d, rows %q", tab.Keys(), tab.Rows)
	}
}
