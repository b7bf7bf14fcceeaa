package comment

import (
	"context"
	"io"

	ghci "github.com/algal-assay/assay/ci/github"
)

// PostRedacted posts the check's comment as PostPR does (`assay ci pr
// --post`). What the API answered (the URL, a reason quoting the token)
// passes through red before it joins the verb's JSON summary, and so
// does an error.
func PostRedacted(ctx context.Context, stdout io.Writer, pr int, body string, red *ghci.Redactor) (map[string]any, error) {
	posted, err := PostPR(ctx, stdout, pr, body)
	if err != nil {
		return nil, red.Error(err)
	}
	for k, v := range posted {
		if s, ok := v.(string); ok {
			posted[k] = red.String(s)
		}
	}
	return posted, nil
}
