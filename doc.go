// Package actorpool pools costly objects — database and cache connections,
// TCP clients, anything slow to create — and lends them out through leases.
//
// A [Pool] is built by [New] from a [Factory], which creates and destroys
// objects (and may check them, as a [Validator] and a [Tester]), and a
// [Config], which sizes the pool and sets its timeouts. [FactoryFuncs] makes
// a factory from plain functions:
//
//	pool, err := actorpool.New(actorpool.FactoryFuncs[net.Conn]{
//		CreateFunc:  func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) },
//		DestroyFunc: func(c net.Conn) { c.Close() },
//	}, actorpool.Config{MaxObjects: 8})
//
// # Taking and giving back
//
// [Pool.Acquire] waits for an object; [Pool.TryAcquire] never waits;
// [Pool.AcquireAsync] returns at once with a channel that delivers the
// object later. Each hands out a [Lease]: [Lease.Release] gives the object
// back, [Lease.Destroy] throws it away. [Pool.With] and [Do] wrap the three
// steps, give the object back even when the callback panics, and let nested
// calls on the callback's context reuse the same object.
//
// Takers that find no idle object wait in line and are served first come,
// first served: a given-back object goes straight to the taker that has
// waited longest, and after a short hold the goroutine that gave it back
// lets that taker run first. A take fails with [ErrPoolExhausted] when
// Config.MaxQueueSize takers already wait, with a [*CreateError] when the
// create made for it fails, and with a [*WaitError] when its context ends;
// the last says how long it waited and how busy the pool was.
//
// # Writing a factory
//
// The pool calls Create, Test and Destroy from goroutines of its own,
// never while it holds a lock: Create and Test may do I/O, bounded by
// Config.CreateTimeout and Config.TestTimeout. Validate runs on the
// goroutine of every take and give-back, at times while the pool holds
// its wait queue's lock (a woken waiter handing objects on), so it must
// be fast, do no I/O, and neither take nor give back the pool's objects.
// Methods run concurrently on different objects, one at a time on one
// object — except that Destroy may run while Test still runs. A Test
// past TestTimeout is not waited for: the pool destroys its object at the
// deadline, because that is what ends a Test stuck in I/O. Destroy must
// then only unblock Test — for a connection, close its socket, which any
// goroutine may do (under TLS, the socket under the tls.Conn) — and leave
// the rest of the goodbye to Test's goroutine, to finish when Test
// returns: a client library's Close is rarely safe beside its own I/O. The
// adapters keep this with a small atomic state per connection (idle,
// testing, abandoned), so that neither side waits for the other. Destroy
// never runs on an object before Create has returned it, even past
// CreateTimeout.
//
// # Design
//
// One goroutine, the pool's keeper, owns every object's lifecycle: it
// creates objects on demand and for Config.MinIdle, backs off when creates
// fail, tests idle objects every Config.ValidationInterval, destroys those
// idle longer than Config.MaxIdleTime or older than Config.MaxLifetime,
// carries out [Pool.Reload] and [Pool.Close], and reclaims leaked leases.
// It is an actor in the classic sense: the only code that changes that
// state, told of events by messages. It never blocks on the factory:
// creates, tests and destroys run on goroutines of their own and report
// back through its inbox.
//
// Taking an idle object and giving one back do not go through the keeper.
// Each object lives in a slot with one word of atomic state (idle, in use,
// reserved by the keeper, free), and takers, holders and the keeper move
// slots between states with compare-and-swap, the way HikariCP's
// ConcurrentBag does. An uncontended take and give-back is three CAS
// operations and no allocation.
//
// # Words
//
// The docs and the code use each of these words in one sense.
//
//   - Acquire, or take: get an object from the pool, through Acquire,
//     TryAcquire, AcquireAsync or With. The caller is a taker; a taker that
//     finds no idle object waits in line, a waiter.
//   - Release, or give back: return an object to the pool through
//     Lease.Release. Until then the object is lent out, or in use, and its
//     lease's caller is its holder.
//   - Idle: ready to be taken. A parked object is an idle object just
//     given back, kept aside in its giver's shard for the next take there.
//   - Retire: take an object out of service for good; a retired object is
//     then destroyed. A holder retires the object it gives back if it must
//     not be kept (doomed, failing Validate, the pool closing), a taker one
//     it finds so, and the keeper idle ones.
//   - Destroy: call Factory.Destroy on a retired object, exactly once.
//     Lease.Destroy is a holder's way to retire its object.
//   - Doomed: marked to be retired by whoever gives it back or takes it
//     next, because it must go while someone may hold it (Reload,
//     MaxLifetime, Lease.Destroy inside With).
//   - Evict: retire an idle object for its idle time, its age or a Reload;
//     the keeper decides it when it sweeps the slots.
//   - Discarded: retired through Lease.Destroy, as DestroyCounts counts it.
//   - Leaked: a lease dropped (become unreachable) without Release or
//     Destroy. The keeper reclaims its object: takes it back and destroys
//     it. A suspected leak is a lease held past Config.LeakThreshold, only
//     logged.
//   - Sweep: retire objects made idle after Close began.
//
// # Leaks
//
// A lease that becomes unreachable without being given back is found by the
// garbage collector: the pool logs LEAK-DETECTED, with the stack of the take
// when Config.TraceAcquires is set, destroys the object and frees its slot.
// A lease held longer than Config.LeakThreshold is logged once as a suspected
// leak.
//
// Leak detection relies on runtime.AddCleanup, which reports from a
// goroutine outside any testing/synctest bubble; a pool used inside a bubble
// must not leak leases.
package actorpool
