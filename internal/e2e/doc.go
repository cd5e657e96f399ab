// Package e2e holds the tests of several instances of the service sharing one real Redis:
// the microservice as it is deployed, behind a load balancer. It has no code of its own.
package e2e
