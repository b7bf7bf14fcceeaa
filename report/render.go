package report

import (
	"bytes"
	"embed"
	"html/template"

	"github.com/algal-assay/assay/engine/canon"
)

//go:embed templates/*.tmpl templates/style.css
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"short": short,
}).ParseFS(files, "templates/*.tmpl"))

// style is inlined into every page: a report must read the same opened
// from disk, from an artifact download or offline, so it loads nothing.
var style = func() template.CSS {
	b, err := files.ReadFile("templates/style.css")
	if err != nil {
		panic(err)
	}
	return template.CSS(b)
}()

type document struct {
	Style template.CSS
	View  any
}

func render(name string, view any) ([]byte, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, document{Style: style, View: view}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func short(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12]
	}
	return digest
}

func canonText(v any) (string, error) {
	b, err := canon.Encode(v)
	return string(b), err
}
