package evaldynamic

import (
	"fmt"
	"strings"
)

// fileSafe turns a configured name into part of a file name: path separators and spaces become
// dashes, parentheses go. It is not one-to-one ("Static (A)" and "Static A" both give
// "Static-A"), so checkFileNames refuses a configuration whose names would share a file.
var fileSafe = strings.NewReplacer("/", "-", " ", "-", "\\", "-", "(", "", ")", "")

// logPrefix is the decision-log file prefix of one run.
func logPrefix(protocol, scenario, policy string, seed uint64) string {
	return fileSafe.Replace(fmt.Sprintf("%s_%s_%s_seed%d", protocol, scenario, policy, seed))
}

// plotFile is the rolling-SR plot of one scenario under one protocol; the protocol is named
// only when the run has several.
func (c *Config) plotFile(protocol, scenario string) string {
	if len(c.Protocols) > 1 {
		return "sr-" + fileSafe.Replace(protocol) + "-" + fileSafe.Replace(scenario) + ".png"
	}
	return "sr-" + fileSafe.Replace(scenario) + ".png"
}

// CheckFileNames refuses, before any work, names that would write the same plot or (with
// decisionLog) the same decision-log files: one run's output would overwrite another's, or two
// runs' decisions would mix in one log.
func (c *Config) CheckFileNames(decisionLog bool) error {
	plots := map[string]string{}
	for _, p := range c.Protocols {
		for _, s := range c.Scenarios {
			what := fmt.Sprintf("scenario %q", s.Name)
			if len(c.Protocols) > 1 {
				what = fmt.Sprintf("protocol %q with scenario %q", p.Name, s.Name)
			}
			f := c.plotFile(p.Name, s.Name)
			if other, ok := plots[f]; ok {
				return fmt.Errorf("scenarios: %s and %s would both write the plot %s; rename one", other, what, f)
			}
			plots[f] = what
		}
	}
	if !decisionLog {
		return nil
	}
	prefixes := map[string]string{}
	for _, p := range c.Protocols {
		for _, s := range c.Scenarios {
			for _, pol := range c.Policies {
				for _, seed := range c.Dynamic.Seeds {
					what := fmt.Sprintf("protocol %q, scenario %q, policy %q, seed %d", p.Name, s.Name, pol.Name, seed)
					f := logPrefix(p.Name, s.Name, pol.Name, seed)
					if other, ok := prefixes[f]; ok {
						return fmt.Errorf("--decision-log: the runs of %s and of %s would share the decision-log prefix %s and mix their decisions; rename a policy or scenario", other, what, f)
					}
					prefixes[f] = what
				}
			}
		}
	}
	return nil
}
