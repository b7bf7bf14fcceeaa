package suites

import (
	"testing"

	"github.com/algal-assay/assay/suites/assaysuite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSuites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Assay workload suites")
}

// Every workload in this directory, plus the roots ASSAY_SUITES names.
var _ = assaysuite.Workloads(".")
