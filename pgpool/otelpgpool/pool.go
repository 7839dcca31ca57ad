package otelpgpool

import (
	"net"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/actorpool/actorpool/pgpool"
)

// ScopeName is the instrumentation scope of the Tracer's spans, and the
// name to give the Meter passed to RegisterMetrics.
const ScopeName = "github.com/actorpool/actorpool/pgpool/otelpgpool"

// poolName is the pool's db.client.connection.pool.name: its
// Config.Pool.Name, or the server and database it connects to, formatted
// as the semantic conventions ask of pools without a name.
func poolName(cfg *pgpool.Config) string {
	if cfg.Pool.Name != "" {
		return cfg.Pool.Name
	}
	cc := cfg.ConnConfig
	return net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))) + "/" + cc.Database
}

// poolAttributes are the attributes that identify the pool on its spans.
func poolAttributes(cfg *pgpool.Config) []attribute.KeyValue {
	cc := cfg.ConnConfig
	return []attribute.KeyValue{
		semconv.DBSystemNamePostgreSQL,
		semconv.DBClientConnectionPoolName(poolName(cfg)),
		semconv.ServerAddress(cc.Host),
		semconv.ServerPort(int(cc.Port)),
		semconv.DBNamespace(cc.Database),
	}
}
