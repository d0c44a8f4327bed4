package router_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
)

// exampleTools is a small catalog: two weather services on different hosts and a currency
// converter.
var exampleTools = []catalog.Tool{
	{ID: "http/open-meteo/forecast", Name: "open_meteo_forecast", Platform: "other",
		Description: "Weather forecast for a city: temperature, rain and wind for the next days.",
		Endpoints:   []catalog.Endpoint{{URL: "https://api.open-meteo.com/v1/forecast"}}},
	{ID: "http/wttr/weather", Name: "wttr_weather", Platform: "other",
		Description: "Current weather and forecast for a city, as text.",
		Endpoints:   []catalog.Endpoint{{URL: "https://wttr.in/"}}},
	{ID: "http/frankfurter/convert", Name: "currency_convert", Platform: "other",
		Description: "Convert an amount between two currencies at the latest exchange rate.",
		Endpoints:   []catalog.Endpoint{{URL: "https://api.frankfurter.app/latest"}}},
}

// Example shows the agent loop: Select a tool for the request, execute it, Report what
// happened. A tool that fails is masked by the recommended policy's health check, and the next
// Select falls back to the other weather service.
func Example() {
	ctx := context.Background()
	// BM25 with hashed contexts: runs with no encoder installed. With a model folder use
	// router.NewDenseFrontend(model, 0).
	front, err := router.NewLexicalFrontend(256)
	if err != nil {
		panic(err)
	}
	// The recommended policy reads calibrated relevance: fit it on a labelled dev split with
	// the same frontend (here the embedded default benchmark's).
	b, err := defaultbench.Load()
	if err != nil {
		panic(err)
	}
	cal, note, err := router.FitCalibration(front, b, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	if err != nil {
		panic(err)
	}
	r, err := router.New(ctx, router.Config{Frontend: front, Tools: exampleTools, Calibrator: cal, CalibrationNote: note})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	sel, err := r.Select(ctx, "weather forecast for Paris tomorrow", router.SelectOptions{})
	if err != nil {
		panic(err)
	}
	first := sel.Tools[0]
	fmt.Printf("chose %s (propensity %g)\n", first.ID, first.Propensity)

	// The call timed out after 2 s: report it.
	if _, err := r.Report(ctx, sel.DecisionID, first.ID, router.Outcome{Executed: false}, 2*time.Second); err != nil {
		panic(err)
	}
	sel, _ = r.Select(ctx, "weather forecast for Paris tomorrow", router.SelectOptions{})
	for _, t := range sel.Tools {
		fmt.Printf("%s masked=%v reliability=%.2f\n", t.ID, t.Masked, t.Reliability)
	}
	// One step after its failure, the recovery model gives the failed tool a chance of being
	// up again of 1 − exp(−μ̂·1), μ̂ = 1/2000 per step before any outage was seen to end
	// (≈ 0.0005); it is masked for the next 100 steps.

	// Output:
	// chose http/wttr/weather (propensity 1)
	// http/open-meteo/forecast masked=false reliability=1.00
	// http/wttr/weather masked=true reliability=0.00
}
