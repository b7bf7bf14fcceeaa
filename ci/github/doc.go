// Package github posts the Assay PR-check report as one sticky pull-request
// comment and gathers what that needs from a GitHub Actions job: the target
// repository and pull request, the token, the API base, and, for the
// fork-safe two-workflow setup, the artifact handed over by the check job.
//
// # Sticky comment
//
// A report comment starts with a hidden marker line, an HTML comment such as
// "<!-- assay:pr-check -->" (see [Marker]). [Post] pages through the pull
// request's comments until it finds one whose body starts with that marker
// and edits it; only when none exists does it create one. Only a comment by
// a bot or by a user with write access (author association owner, member
// or collaborator) counts: anyone may type the marker, and taking their
// comment for the report would put the report under their name, where they
// could rewrite the verdict later. Different keys give different markers,
// so several workflows can each keep their own comment on the same pull
// request.
//
// # Size limit
//
// GitHub rejects comment bodies longer than 65,536 characters and a report
// is never split across comments. [Compose] assembles ordered sections
// (verdict first, then the Pareto diff, the promotion diff, then the largest
// regressions) and, when they do not all fit, keeps the leading sections
// whole, cuts the first one that does not fit at a line boundary (closing any
// code fence or <details> block it leaves open), drops the rest, and ends
// with a notice pointing at the job summary and the uploaded artifact.
// Lengths are counted in UTF-16 code units, which is never less than the
// number of characters however GitHub counts them; 65,536 units are also
// at most 196,608 bytes of UTF-8, under the 262,144 bytes GitHub has been
// measured to enforce behind its "65536 characters" message.
//
// # Artifact layout (check job -> comment job)
//
// The check workflow runs pull-request code with a read-only token, so it
// cannot comment on pull requests from forks. It uploads an artifact instead
// and a second workflow, triggered by workflow_run and running only
// default-branch code, posts a comment it composes from the artifact's
// evidence (ci/artifact, which owns the rest of the layout). This package
// reads only which pull request the artifact is for:
//
//	pr.json      {"number": <PR number>, "head_sha": "<commit the check ran on>"}
//	pr-number    the PR number alone, decimal, optional trailing newline
//
// The comment.md the check job writes beside them is for people reading
// the artifact; it is pull-request output, so [ReadArtifact] never reads it.
//
// At least one of pr.json and pr-number must be present; when both are, they
// must name the same pull request. head_sha is optional (40 or 64 lowercase
// hex digits); pr.json accepts no other members. Every file must be a
// regular file: symbolic links are refused, because the artifact's content
// is controlled by the pull request and a link could otherwise make the
// comment job publish a file from the runner. [ReadArtifact] enforces this.
package github
