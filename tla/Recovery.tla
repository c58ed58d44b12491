------------------------------ MODULE Recovery ------------------------------
(***************************************************************************)
(* Provider failure recovery for one logical turn (CONTRACT section 12),   *)
(* as implemented by fsm/recovery/recovery.go.                             *)
(*                                                                         *)
(* Two machines, never mixed.  Retry is finite: a failure after request    *)
(* bytes may have reached the provider replaces the attempt at most        *)
(* MaxAttempts times (provider_retry).  Network wait has no count limit:   *)
(* an outage before any request byte was written waits and tries again     *)
(* (provider_waiting_for_network) without consuming the retry budget,      *)
(* bounded only by the max network wait (None: no ceiling; 0: waiting      *)
(* disabled).  The turn's first outage arms that ceiling, and from then on *)
(* it bounds the whole recovery, measured from that outage: every later    *)
(* wait and retry (a server's Retry-After included) ends strictly before   *)
(* it, a minimum delay that does not fit stops recovery rather than        *)
(* retrying early, and every later request gets only what is left to open *)
(* (dial and TLS handshake).                                               *)
(* A failed attempt that may have been billed with its usage unknown       *)
(* persists the usage_uncertainty record before the attempt is replaced    *)
(* or abandoned, and the flag is sticky.  Every turn ends with exactly     *)
(* one outcome, succeeded or failed, and nothing after it.                 *)
(*                                                                         *)
(* The variables phase, retries, waits, outage, floor, uncertain and code  *)
(* are the Go machine's State {Phase, Retries, NetworkWaits,               *)
(* OutageStartMS (None when !Outage), OutageFloorMS, Uncertain, Code}      *)
(* (code = None where Go has "").  maxWait is Config.MaxNetworkWaitMS      *)
(* (None for nil), chosen once from WaitLimits in Init so that one model   *)
(* covers every kind of ceiling; it never changes.  The actions are the    *)
(* machine's triggers, one for one: Start, AttemptFailed(fault, now),      *)
(* AttemptSucceeded, TimerFired, Cancel, Abort.  Done is the usual         *)
(* stuttering step of a terminated system: succeeded and failed are        *)
(* final, and any other state without a successor is a deadlock the        *)
(* checker reports.  fsm/recovery/graph_test.go enumerates the Go machine  *)
(* and requires its graph to equal GraphView's projection of this spec     *)
(* (tla/Recovery.graph.json).                                              *)
(*                                                                         *)
(* Faults are abstract: each stands for the facts of one kind of failure,  *)
(* with the class recovery.Classify gives them, whether                    *)
(* recovery.UsageUncertain holds for them (Billed), and the code a fatal   *)
(* one fails with.  graph_test.go maps each to concrete recovery.Facts;    *)
(* Classify, UsageUncertain and Delay themselves are table-tested in Go.   *)
(* Time is in ticks of one millisecond: a network wait's delay is          *)
(* NetMin..NetMax ticks, a retry's RetryMin..RetryMax, a Retry-After is    *)
(* exactly RetryAfterTicks (the Go model uses constant backoffs of those   *)
(* ranges).  Armed, a delay that would reach the ceiling is replaced by   *)
(* its minimum.                                                            *)
(*                                                                         *)
(* clock is the environment: the earliest clock reading the next failure   *)
(* may carry (readings are monotonic, and a failure after a network wait   *)
(* comes no earlier than the wait's end).  It bounds the model             *)
(* (MaxClock), which is also what makes the number of waits finite when    *)
(* maxWait is None: there, an outage that never ends is an intended        *)
(* endless wait, ended only by Cancel.                                     *)
(*                                                                         *)
(* The other variables are history variables: the machine does not have    *)
(* them, they record what the steps returned so that the invariants can    *)
(* say what the contract means.  They never enable or disable an action.   *)
(*                                                                         *)
(* SAFETY ONLY.  tla-checker checks the invariants below in every          *)
(* reachable state; nothing here states or checks liveness (that a turn    *)
(* eventually ends).  The Go explorer in graph_test.go checks the finite   *)
(* stand-ins: every non-final state can still reach an outcome, no state   *)
(* but the outcomes is stuck, the outcomes are absorbing, and with a       *)
(* bounded max network wait the number of waits is bounded whatever the    *)
(* clock does.                                                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxAttempts,  \* the retry budget (Config.MaxAttempts)
    WaitLimits,   \* the max network waits modelled: naturals and None
    MaxClock,     \* bound on clock readings (finiteness only)
    NetMin,       \* a network wait's minimum delay (Delay with jitter 0)
    NetMax,       \* its maximum
    RetryMin,     \* a retry's minimum delay without Retry-After
    RetryMax,     \* its maximum
    RetryAfterTicks \* the Retry-After of fault retry_after, below the ceiling

None == "none"  \* no value: Go's "", nil, or Outage = false

ASSUME /\ MaxAttempts \in Nat
       /\ MaxClock \in Nat
       /\ NetMin \in Nat /\ NetMin >= 1
       /\ NetMax \in Nat /\ NetMax >= NetMin
       /\ RetryMin \in Nat /\ RetryMin >= 1
       /\ RetryMax \in Nat /\ RetryMax >= RetryMin
       /\ RetryAfterTicks \in Nat /\ RetryAfterTicks >= 1

Phases   == {"idle", "attempting", "waiting_for_network", "backing_off",
             "succeeded", "failed"}
Terminal == {"succeeded", "failed"}
Live     == Phases \ Terminal

(***************************************************************************)
(* Faults, with what Classify and UsageUncertain say of their facts:       *)
(*   outage            connect, no request byte written: network wait      *)
(*   throttle          HTTP 429: retry                                     *)
(*   retry_after       HTTP 429 with a Retry-After the ceiling allows:     *)
(*                     retry after exactly RetryAfterTicks                 *)
(*   cut               stream cut after content: retry, billed             *)
(*   auth              HTTP 401: fatal auth_failed                         *)
(*   overflow          context_length_exceeded error event after content:  *)
(*                     fatal context_overflow, billed                      *)
(*   long_retry_after  HTTP 429 with a Retry-After above the ceiling:      *)
(*                     retry, but its delay is fatal retry_after_too_long  *)
(***************************************************************************)
Faults == {"outage", "throttle", "retry_after", "cut", "auth", "overflow",
           "long_retry_after"}

Class(f) ==
    IF f = "outage" THEN "network_wait"
    ELSE IF f \in {"throttle", "retry_after", "cut", "long_retry_after"} THEN "retry"
    ELSE "fatal"

Billed(f) == f \in {"cut", "overflow"}

FatalCode(f) == IF f = "auth" THEN "auth_failed" ELSE "context_overflow"

Codes == {None, "auth_failed", "context_overflow", "retries_exhausted",
          "retry_after_too_long", "network_wait_exceeded", "canceled",
          "aborted"}

\* Effects (recovery.EffectKind).
EPersist == "persist_usage_uncertainty"
EDiscard == "discard_attempt"
ERetry   == "emit_retry"
EWait    == "emit_waiting_for_network"
ETimer   == "start_timer"
EStart   == "start_attempt"
ESucceed == "succeed"
EFail    == "fail"
Effects  == {EPersist, EDiscard, ERetry, EWait, ETimer, EStart, ESucceed, EFail}
\* The effects that replace or abandon an attempt.
Replacing == {EDiscard, ERetry, EWait, ETimer, EStart, EFail}
\* The outcome effects.
Outcomes == {ESucceed, EFail}

Max(a, b) == IF a > b THEN a ELSE b

\* A retry's possible delays and its minimum (Delay with jitter 0): a
\* Retry-After is exact.
RetryDelays(f) == IF f = "retry_after" THEN {RetryAfterTicks} ELSE RetryMin..RetryMax
RetryLeast(f)  == IF f = "retry_after" THEN RetryAfterTicks ELSE RetryMin

VARIABLES
    phase,        \* State.Phase
    retries,      \* State.Retries: the retry budget consumed
    waits,        \* State.NetworkWaits
    outage,       \* State.OutageStartMS, or None before the first outage
    floor,        \* State.OutageFloorMS
    uncertain,    \* State.Uncertain
    code,         \* State.Code, or None
    maxWait,      \* Config.MaxNetworkWaitMS, or None (fixed)
    \* environment
    clock,        \* the earliest reading the next failure may carry
    \* history
    out,          \* the effects the last step returned, in order
    billed,       \* the last step gave up an attempt that may have been billed
    retryEvents,  \* provider_retry events emitted in the turn
    wasUncertain, \* uncertain held in some earlier state
    outcomes,     \* outcome effects (succeed, fail) returned in the turn
    late,         \* a step returned effects after the outcome
    opening,      \* the opening bound of the attempt the last step started
                  \* (Effect.OpenWithinMS), None if unbounded or none started
    delay,        \* the delay of the timer the last step started, or None
    least         \* that delay's minimum, or None

\* Flat: tla-checker 0.9.0 does not unfold nested tuples in UNCHANGED.
vars == <<phase, retries, waits, outage, floor, uncertain, code, maxWait,
          clock, out, billed, retryEvents, wasUncertain, outcomes, late,
          opening, delay, least>>

Init ==
    /\ phase = "idle"
    /\ retries = 0
    /\ waits = 0
    /\ outage = None
    /\ floor = 0
    /\ uncertain = FALSE
    /\ code = None
    /\ maxWait \in WaitLimits
    /\ clock = 0
    /\ out = <<>>
    /\ billed = FALSE
    /\ retryEvents = 0
    /\ wasUncertain = FALSE
    /\ outcomes = 0
    /\ late = FALSE
    /\ opening = None
    /\ delay = None
    /\ least = None

\* The number of effects of effs in S.
Count(effs, S) == Cardinality({i \in DOMAIN effs : effs[i] \in S})

\* A step returns effs; the history records them.
Emit(effs) ==
    /\ out' = effs
    /\ retryEvents' = retryEvents + Count(effs, {ERetry})
    /\ outcomes' = outcomes + Count(effs, Outcomes)
    /\ late' = (late \/ (outcomes > 0 /\ Len(effs) > 0))
    /\ wasUncertain' = (wasUncertain \/ uncertain)

\* Give up an attempt: the usage_uncertainty record first when it may have
\* been billed (b), then the discard.
Abandon(b) == IF b THEN <<EPersist, EDiscard>> ELSE <<EDiscard>>

\* The turn fails with c after the effects effs.
GiveUp(c, effs) ==
    /\ phase' = "failed"
    /\ code' = c
    /\ Emit(effs \o <<EFail>>)
    /\ opening' = None
    /\ delay' = None
    /\ least' = None

\* A step that neither starts an attempt nor a timer.
NoAttemptNoTimer == opening' = None /\ delay' = None /\ least' = None

\* A step starts a timer of d ticks whose minimum is lo.
Schedule(d, lo) == opening' = None /\ delay' = d /\ least' = lo

\* The ceiling is armed: a max network wait is set and the turn has had
\* its first outage.
Armed == outage # None /\ maxWait # None

\* The outage time at reading now (armed or not, once there was an outage):
\* never below what the scheduled delays add up to.
Elapsed(now) == Max(now - outage, floor)

(***************************************************************************)
(* Actions: the triggers of fsm/recovery, with the same guards.            *)
(***************************************************************************)

\* TrStart: the first attempt.
Start ==
    /\ phase = "idle"
    /\ phase' = "attempting"
    /\ billed' = FALSE
    /\ Emit(<<EStart>>)
    /\ NoAttemptNoTimer
    /\ UNCHANGED <<retries, waits, outage, floor, uncertain, code, maxWait, clock>>

\* TrAttemptFailed(facts, now, jitter): the attempt in flight failed with
\* fault f, the clock reading now.  clock moves to the end of the timer
\* the step starts (the next reading comes no earlier).
AttemptFailed(f, now) ==
    /\ phase = "attempting"
    /\ billed' = Billed(f)
    /\ uncertain' = (uncertain \/ Billed(f))
    /\ UNCHANGED maxWait
    /\ IF Class(f) = "fatal"
         THEN /\ GiveUp(FatalCode(f), Abandon(Billed(f)))
              /\ clock' = now
              /\ UNCHANGED <<retries, waits, outage, floor>>
       ELSE IF Class(f) = "retry"
         THEN /\ UNCHANGED <<waits, outage>>
              /\ IF retries >= MaxAttempts
                   THEN /\ GiveUp("retries_exhausted", Abandon(Billed(f)))
                        /\ clock' = now
                        /\ UNCHANGED <<retries, floor>>
                 ELSE IF f = "long_retry_after"
                   THEN /\ GiveUp("retry_after_too_long", Abandon(Billed(f)))
                        /\ clock' = now
                        /\ UNCHANGED <<retries, floor>>
                 ELSE IF Armed /\ Elapsed(now) + RetryLeast(f) >= maxWait
                   THEN \* not even the minimum fits: stop, never retry early
                        /\ GiveUp("network_wait_exceeded", Abandon(Billed(f)))
                        /\ clock' = now
                        /\ UNCHANGED <<retries, floor>>
                 ELSE \E d \in RetryDelays(f) :
                        LET wait == IF Armed /\ Elapsed(now) + d >= maxWait
                                    THEN RetryLeast(f) ELSE d
                        IN /\ phase' = "backing_off"
                           /\ retries' = retries + 1
                           /\ floor' = IF Armed THEN Elapsed(now) + wait ELSE floor
                           /\ clock' = now + wait
                           /\ UNCHANGED code
                           /\ Schedule(wait, RetryLeast(f))
                           /\ Emit(Abandon(Billed(f)) \o <<ERetry, ETimer>>)
       ELSE \* network wait
         LET start   == IF outage = None THEN now ELSE outage
             elapsed == Max(now - start, floor)
             over    == IF maxWait = None THEN FALSE
                        ELSE maxWait = 0 \/ elapsed + NetMin >= maxWait
         IN /\ outage' = start
            /\ UNCHANGED retries
            /\ IF over
                 THEN /\ GiveUp("network_wait_exceeded", Abandon(Billed(f)))
                      /\ clock' = now
                      /\ UNCHANGED <<waits, floor>>
                 ELSE \E d \in NetMin..NetMax :
                        LET wait == IF maxWait # None /\ elapsed + d >= maxWait
                                    THEN NetMin ELSE d
                        IN /\ phase' = "waiting_for_network"
                           /\ waits' = waits + 1
                           /\ floor' = elapsed + wait
                           /\ clock' = now + wait
                           /\ UNCHANGED code
                           /\ Schedule(wait, NetMin)
                           /\ Emit(Abandon(Billed(f)) \o <<EWait, ETimer>>)

\* TrAttemptSucceeded: the outcome.
AttemptSucceeded ==
    /\ phase = "attempting"
    /\ phase' = "succeeded"
    /\ billed' = FALSE
    /\ Emit(<<ESucceed>>)
    /\ NoAttemptNoTimer
    /\ UNCHANGED <<retries, waits, outage, floor, uncertain, code, maxWait, clock>>

\* TrTimerFired(now): the next attempt, at the clock reading now.  Armed,
\* it gets what is left of the allowance to open its request in; with
\* nothing left (the timer fired late) the turn fails instead.
TimerFired(now) ==
    /\ phase \in {"waiting_for_network", "backing_off"}
    /\ billed' = FALSE
    /\ clock' = now
    /\ delay' = None
    /\ least' = None
    /\ UNCHANGED <<retries, waits, outage, floor, uncertain, maxWait>>
    /\ IF Armed /\ Elapsed(now) >= maxWait
         THEN /\ GiveUp("network_wait_exceeded", <<>>)
         ELSE /\ phase' = "attempting"
              /\ opening' = IF Armed THEN maxWait - Elapsed(now) ELSE None
              /\ UNCHANGED code
              /\ Emit(<<EStart>>)

\* TrCancel: the caller cancels the turn.  An attempt in flight is given up
\* like a failed one; it may have been billed (b: its request was written).
Cancel ==
    /\ phase \in Live
    /\ IF phase = "attempting"
         THEN \E b \in BOOLEAN :
                /\ billed' = b
                /\ uncertain' = (uncertain \/ b)
                /\ GiveUp("canceled", Abandon(b))
         ELSE /\ billed' = FALSE
              /\ UNCHANGED uncertain
              /\ GiveUp("canceled", <<>>)
    /\ UNCHANGED <<retries, waits, outage, floor, maxWait, clock>>

\* TrAbort: the driver could not carry out an effect; the turn fails.
Abort ==
    /\ phase \in Live
    /\ billed' = FALSE
    /\ GiveUp("aborted", IF phase = "attempting" THEN <<EDiscard>> ELSE <<>>)
    /\ UNCHANGED <<retries, waits, outage, floor, uncertain, maxWait, clock>>

\* The turn is over: nothing happens any more.
Done ==
    /\ phase \in Terminal
    /\ UNCHANGED vars

Next ==
    \/ Start
    \/ \E f \in Faults : \E now \in clock..MaxClock : AttemptFailed(f, now)
    \/ AttemptSucceeded
    \/ \E now \in clock..Max(clock, MaxClock) : TimerFired(now)
    \/ Cancel
    \/ Abort
    \/ Done

(***************************************************************************)
(* Invariants.                                                             *)
(***************************************************************************)

TypeOK ==
    /\ phase \in Phases
    /\ retries \in Nat
    /\ waits \in Nat
    /\ outage \in (0..MaxClock) \cup {None}
    /\ floor \in Nat
    /\ uncertain \in BOOLEAN
    /\ code \in Codes
    /\ (code # None) = (phase = "failed")
    /\ maxWait \in WaitLimits
    /\ clock \in Nat
    /\ DOMAIN out = 1..Len(out)
    /\ \A i \in DOMAIN out : out[i] \in Effects
    /\ billed \in BOOLEAN
    /\ retryEvents \in Nat
    /\ wasUncertain \in BOOLEAN
    /\ outcomes \in Nat
    /\ late \in BOOLEAN
    /\ opening = None \/ opening \in Nat
    /\ delay = None \/ delay \in Nat
    /\ least = None \/ least \in Nat

\* The retry budget is never exceeded: neither the count the machine keeps
\* nor the provider_retry events emitted.
RetryCountWithinBudget ==
    /\ retries <= MaxAttempts
    /\ retryEvents <= MaxAttempts

\* The budget consumed is exactly the provider_retry events emitted: a
\* network wait (which emits provider_waiting_for_network) never consumes
\* it, and neither does anything else.
NetworkWaitNeverConsumesBudget == retries = retryEvents

\* Usage uncertainty, once set, stays set; a step that persisted the record
\* leaves it set.
UncertaintySticky ==
    /\ wasUncertain => uncertain
    /\ (\E i \in DOMAIN out : out[i] = EPersist) => uncertain

\* A step persists the usage_uncertainty record exactly when it gave up an
\* attempt that may have been billed, once, and before every effect that
\* replaces or abandons the attempt.
PersistBeforeReplace ==
    /\ Count(out, {EPersist}) = (IF billed THEN 1 ELSE 0)
    /\ \A i, j \in DOMAIN out :
           (out[i] = EPersist /\ out[j] \in Replacing) => i < j

\* A turn has at most one outcome, has one exactly when it is over, and
\* nothing comes after it.
ExactlyOneOutcome ==
    /\ outcomes <= 1
    /\ (phase \in Terminal) = (outcomes = 1)
    /\ ~late

\* No delay is shorter than its minimum: recovery never retries early (a
\* Retry-After is exact, its own minimum).
NoEarlyRetry ==
    IF delay = None THEN TRUE ELSE least # None /\ delay >= least

\* Once the first outage armed a bounded ceiling, every wait and every
\* retry ends strictly before it, measured from that outage by the
\* environment's clock: what does not fit stopped recovery instead.
CeilingBoundsRecovery ==
    IF Armed /\ phase \in {"waiting_for_network", "backing_off"}
    THEN clock - outage < maxWait
    ELSE TRUE

\* Armed, every attempt started after a timer gets what is left of the
\* allowance to open its request in, and its opening ends at the ceiling
\* at the latest; unarmed, it is not bounded.
OpeningWithinCeiling ==
    /\ (out = <<EStart>> /\ Armed) => opening # None
    /\ IF opening = None THEN TRUE
       ELSE /\ Armed
            /\ opening >= 1
            /\ clock - outage + opening <= maxWait

(***************************************************************************)
(* What fsm/recovery/graph_test.go compares with the Go machine: the       *)
(* machine's variables and its configuration's max network wait; the       *)
(* environment and history variables projected away.                       *)
(***************************************************************************)
GraphView == [phase |-> phase, retries |-> retries, waits |-> waits,
              outage |-> outage, floor |-> floor, uncertain |-> uncertain,
              code |-> code, max_wait |-> maxWait]

=============================================================================
