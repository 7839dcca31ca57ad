package jsserver

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// clusterTimeout bounds how long StartCluster waits for the servers to
// elect a JetStream meta leader; an election takes seconds, more on a busy
// machine.
const clusterTimeout = 30 * time.Second

// A Cluster is servers in this process, routed to each other on loopback,
// that run JetStream as one cluster.
type Cluster struct {
	servers []*Server
}

// StartCluster starts n servers as one JetStream cluster and returns once
// they have elected a meta leader and all follow it, so that streams can be
// created. Three is the smallest cluster that survives the loss of a
// server.
//
// opts apply to every server, with these differences: Name, "" for
// "jsserver", names the cluster and is the prefix of the servers' names,
// Name-1 to Name-n; each server's store is the directory Dir/Name-i, or a
// temporary one if Dir is ""; Port must be 0, each server takes a free
// port.
func StartCluster(n int, opts Options) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("jsserver: a cluster of %d servers; want at least 1, and 3 to survive the loss of one", n)
	}
	if opts.Port != 0 {
		return nil, fmt.Errorf("jsserver: Options.Port is %d for a cluster; want 0, each server takes a free port", opts.Port)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "jsserver"
	}
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	// Every server must know its routes before it starts, so the route
	// ports are chosen up front, and another process may take one in
	// between — a test binary beside this one, starting servers of its
	// own. The cluster is then started again on other ports.
	for attempt := 1; ; attempt++ {
		c, err := startCluster(n, opts, host)
		if err == nil || attempt == portAttempts || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
	}
}

// portAttempts is how many times StartCluster chooses route ports.
const portAttempts = 3

// startCluster starts n servers on route ports chosen now.
func startCluster(n int, opts Options, host string) (*Cluster, error) {
	ports, err := choosePorts(host, n)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, n)
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats-route", Host: net.JoinHostPort(host, strconv.Itoa(p))}
	}

	c := &Cluster{}
	for i := range n {
		o := opts
		o.Name = fmt.Sprintf("%s-%d", opts.Name, i+1)
		if opts.Dir != "" {
			o.Dir = filepath.Join(opts.Dir, o.Name)
		}
		s, err := start(o, func(so *server.Options) {
			so.Cluster.Name = opts.Name
			so.Cluster.Host = host
			so.Cluster.Port = ports[i]
			so.Routes = routes
		})
		if err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("jsserver: starting cluster server %s (route port %d): %w", o.Name, ports[i], err)
		}
		c.servers = append(c.servers, s)
	}
	if err := c.waitCurrent(clusterTimeout); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

// choosePorts is freePorts, but for the test of a port taken meanwhile.
var choosePorts = freePorts

// freePorts returns n ports that were free on host a moment ago.
func freePorts(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	// Holding each listener until all are chosen keeps the ports distinct.
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("jsserver: choosing a route port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitCurrent waits until a server leads the JetStream meta group, every
// server follows it, and the leader can place a stream on every server.
// Following is not enough: the leader places a stream's replicas only on
// servers whose statistics it has received since they came up, and until
// it has, a stream of three replicas is refused with "no suitable peers
// for placement" (a CI run of the bench module met it).
func (c *Cluster) waitCurrent(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		placeable, current := 0, true
		for _, s := range c.servers {
			current = current && s.srv.JetStreamIsCurrent()
			if s.srv.JetStreamIsLeader() {
				placeable = len(s.srv.JetStreamClusterPeers())
			}
		}
		if placeable == len(c.servers) && current {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jsserver: within %v the cluster did not elect a JetStream meta leader that all %d servers follow and can each hold a replica (%d can)", d, len(c.servers), placeable)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Servers returns the cluster's servers, those shut down included, in the
// order of their names.
func (c *Cluster) Servers() []*Server { return c.servers }

// ClientURLs returns the servers' client URLs separated by commas, as
// nats.Connect takes them.
func (c *Cluster) ClientURLs() string {
	urls := make([]string, len(c.servers))
	for i, s := range c.servers {
		urls[i] = s.ClientURL()
	}
	return strings.Join(urls, ",")
}

// StreamLeader returns the running server that leads stream in the global
// account, the one clients use without accounts, or nil if none does,
// as while the stream's servers elect a leader.
func (c *Cluster) StreamLeader(stream string) *Server {
	for _, s := range c.servers {
		if s.Running() && s.srv.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return s
		}
	}
	return nil
}

// Shutdown shuts every server down, as Server.Shutdown does.
func (c *Cluster) Shutdown() {
	for _, s := range c.servers {
		s.Shutdown()
	}
}
