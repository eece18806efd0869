// Package testwait holds what the integration tests of several packages
// share: waiting for a condition the kernel reaches on its own time.
package testwait

import "time"

// Poll calls cond until it returns nil or timeout has passed, and returns
// its last error. The timeout is a hang guard, never a measurement.
func Poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
