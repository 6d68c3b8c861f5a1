package analysis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
)

// endpointPool runs a model on several SageMaker-compatible endpoints (a
// model's endpoint field lists them, separated by commas or spaces): calls
// go round the endpoints in turn, and a call that an endpoint fails to
// answer (refused, cut, timed out, an error answer that is not the model's
// own) goes to the next one, while the failed endpoint rests until it
// answers /ping again. An error the model itself reports (its input_fn or
// predict_fn failed) is returned as it is: another copy would fail alike.
type endpointPool struct {
	model string
	eps   []*poolEndpoint
	next  atomic.Uint64
	log   *slog.Logger
}

type poolEndpoint struct {
	r        *remoteRunner
	restTill atomic.Int64 // unix nanoseconds: skipped until then unless all rest
	calls    atomic.Int64 // calls it answered
}

// endpointRest is how long an endpoint that failed a call is skipped
// before it is pinged again.
const endpointRest = 5 * time.Second

// splitEndpoints reads an endpoint field: one URL or several.
func splitEndpoints(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
}

func newEndpointPool(model string, endpoints []string, timeout time.Duration, log *slog.Logger) *endpointPool {
	p := &endpointPool{model: model, log: log}
	for _, e := range endpoints {
		p.eps = append(p.eps, &poolEndpoint{r: newRemote(model, e, timeout)})
	}
	return p
}

// Ping succeeds when any endpoint answers.
func (p *endpointPool) Ping(ctx context.Context) error {
	var errs []error
	for _, e := range p.eps {
		err := e.r.Ping(ctx)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Invoke runs one call on the next endpoint in turn that is not resting,
// moving on to the others when it fails to answer.
func (p *endpointPool) Invoke(ctx context.Context, in Request) (Response, error) {
	n := len(p.eps)
	start := int(p.next.Add(1) - 1)
	var last error
	for pass := 0; pass < 2; pass++ { // the second pass tries the resting ones too
		for i := range n {
			e := p.eps[(start+i)%n]
			resting := time.Now().UnixNano() < e.restTill.Load()
			if resting != (pass == 1) {
				continue
			}
			resp, err := e.r.Invoke(ctx, in)
			if err == nil {
				e.calls.Add(1)
				return resp, nil
			}
			if ctx.Err() != nil || !endpointFault(err) {
				return Response{}, err
			}
			last = err
			e.r.pinged.Store(false) // ping before its next call
			e.restTill.Store(time.Now().Add(endpointRest).UnixNano())
			p.log.Warn("model endpoint failed a call; trying another", "model", p.model, "endpoint", e.r.endpoint, "err", err)
		}
	}
	return Response{}, fmt.Errorf("every endpoint of model %s failed: %w", p.model, last)
}

// endpointFault reports whether err is the endpoint's rather than the model's.
func endpointFault(err error) bool {
	var me *ModelError
	return !errors.As(err, &me) || me.Stage == "endpoint" || me.Stage == "timeout"
}

// Calls says how many calls each endpoint answered.
func (p *endpointPool) Calls() map[string]int64 {
	out := map[string]int64{}
	for _, e := range p.eps {
		out[e.r.endpoint] += e.calls.Load()
	}
	return out
}

func (p *endpointPool) Close() error {
	for _, e := range p.eps {
		e.r.Close()
	}
	return nil
}
