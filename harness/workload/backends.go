package workload

import (
	"slices"
	"strings"

	"github.com/algal-assay/assay/engine/effect"
	"gopkg.in/yaml.v3"
)

// Backend is one entry of a workload's backends block: a live model
// server a `<api>:<name>` executor spec reaches, configured by the keys
// the api's registered scheme declares (effect.Live.Settings). For api
// openai:
//
//	backends:
//	  small:
//	    api: openai                 # a registered live backend
//	    model: gpt-4o-mini          # required
//	    base-url: http://127.0.0.1:11434/v1   # default OPENAI_BASE_URL, else api.openai.com
//	    api-key-env: OPENAI_API_KEY # the variable holding the key (never the key)
//	    temperature: 0
//	    max-output-tokens: 512      # default: the cell's maxOutputBytes / 4
//	    timeout-ms: 120000          # per attempt
//	    max-concurrency: 4          # requests in flight
//	    requests-per-minute: 600    # request starts
//	    max-retries: 2              # 408/409/429/5xx and lost connections
//	    response-format: json_schema   # json_schema | json_object | prompt
//	    headers: { OpenAI-Organization: org-123 }
type Backend struct {
	Name string
	// API is the live scheme serving it (the api key).
	API    string
	Config effect.LiveConfig
	Pos    Pos
}

// liveSchemes are the registered live backends, by api name.
func liveSchemes() (names []string, byName map[string]*effect.Scheme) {
	byName = map[string]*effect.Scheme{}
	for _, s := range effect.Schemes() {
		if s.Live != nil {
			names = append(names, s.Name)
			byName[s.Name] = s
		}
	}
	return names, byName
}

// parseBackends reads the backends block, checking every key where it
// was written.
func (w *Workload) parseBackends(d *decoder, n *yaml.Node) error {
	f, order, err := d.entries(n, "backends", "needs at least one backend (or leave the block out)")
	if err != nil {
		return err
	}
	apis, schemes := liveSchemes()
	for _, name := range order {
		at := join("backends", name)
		if !executorPattern.MatchString(name) {
			return d.fail(f[name].key, at, "backend names are 1 to 64 letters, digits, dots, hyphens or underscores")
		}
		// The keys allowed are the named api's; before the api is known,
		// those of every live backend.
		keys, required := []string{"api"}, []string{"api"}
		for _, api := range apis {
			if s := scalarAt(f[name].value, "api"); s != api && slices.Contains(apis, s) {
				continue
			}
			for _, st := range schemes[api].Live.Settings {
				if !slices.Contains(keys, st.Key) {
					keys = append(keys, st.Key)
				}
				if st.Required && !slices.Contains(required, st.Key) {
					required = append(required, st.Key)
				}
			}
		}
		bf, _, err := d.mapping(f[name].value, at, keys, required)
		if err != nil {
			return err
		}
		b := Backend{Name: name, Pos: d.pos(f[name].value)}
		if b.API, err = d.str(bf["api"].value, at+".api"); err != nil {
			return err
		}
		scheme, ok := schemes[b.API]
		if !ok {
			return d.fail(bf["api"].value, at+".api", "unknown api %q (want %s)", b.API, apiForms(apis, schemes))
		}
		values := map[string]any{}
		for _, st := range scheme.Live.Settings {
			x, ok := bf[st.Key]
			if !ok {
				continue
			}
			v, err := d.setting(x.value, at+"."+st.Key, st)
			if err != nil {
				return err
			}
			values[st.Key] = v
		}
		if b.Config, err = scheme.Live.Configure(values); err != nil {
			key := keys[min(1, len(keys)-1)]
			for _, k := range keys {
				if strings.HasPrefix(err.Error(), k) {
					key = k
				}
			}
			if _, ok := bf[key]; !ok {
				return d.fail(f[name].value, at, "%v", err)
			}
			return d.fail(bf[key].value, at+"."+key, "%v", err)
		}
		w.Backends = append(w.Backends, b)
	}
	return nil
}

// apiForms names the live backends' apis for a message.
func apiForms(apis []string, schemes map[string]*effect.Scheme) string {
	forms := make([]string, len(apis))
	for i, api := range apis {
		forms[i] = api + ": " + schemes[api].Live.Serves
	}
	return strings.Join(forms, "; ")
}

// scalarAt is the value of key in mapping n when it is a scalar ("" else).
func scalarAt(n *yaml.Node, key string) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := resolve(n.Content[i]), resolve(n.Content[i+1]); k != nil && k.Value == key && v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

// setting decodes one backend setting as its kind says and checks it
// where it is written.
func (d *decoder) setting(n *yaml.Node, at string, st effect.Setting) (any, error) {
	var v any
	var err error
	switch st.Kind {
	case effect.Text:
		v, err = d.nonEmpty(n, at)
	case effect.String:
		v, err = d.str(n, at)
	case effect.Number:
		v, err = d.number(n, at)
	case effect.Integer:
		v, err = d.integer(n, at, st.Min, st.Max)
	case effect.Bool:
		v, err = d.boolean(n, at)
	case effect.Texts:
		items, serr := d.seq(n, at)
		if serr != nil {
			return nil, serr
		}
		var list []string
		for i, it := range items {
			t, terr := d.nonEmpty(it, index(at, i))
			if terr != nil {
				return nil, terr
			}
			list = append(list, t)
		}
		v = list
	case effect.Headers:
		hf, horder, herr := d.mapping(n, at, nil, nil)
		if herr != nil {
			return nil, herr
		}
		h := map[string]string{}
		for _, k := range horder {
			if h[k], err = d.str(hf[k].value, at+"."+k); err != nil {
				return nil, err
			}
		}
		v = h
	}
	if err != nil {
		return nil, err
	}
	if st.Check != nil {
		if err := st.Check(v); err != nil {
			return nil, d.fail(n, at, "%v", err)
		}
	}
	return v, nil
}

// Backend returns the backend a live spec's argument names, if declared.
func (w *Workload) Backend(name string) (Backend, bool) {
	for _, b := range w.Backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// UsesLive reports whether any executor of w is a live backend.
func (w *Workload) UsesLive() bool {
	for _, s := range w.Systems {
		for _, e := range s.Executors {
			if effect.LiveSpec(e.Spec) {
				return true
			}
		}
	}
	for _, e := range w.Executors {
		if effect.LiveSpec(e.Spec) {
			return true
		}
	}
	if w.Generator != nil {
		for _, e := range w.Generator.Executors {
			if effect.LiveSpec(e.Spec) {
				return true
			}
		}
	}
	return false
}
