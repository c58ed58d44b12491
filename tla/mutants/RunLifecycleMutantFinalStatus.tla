------------------- MODULE RunLifecycleMutantFinalStatus --------------------
(***************************************************************************)
(* MUTANT of RunLifecycle.tla: tla/check.mjs requires it to fail.          *)
(* final_result reports completed whatever settled announced (the driver   *)
(* fills the status in itself instead of taking the machine's).            *)
(* EXPECT: SettledBeforeFinal                                              *)
(* Everything else is a copy of RunLifecycle.tla; keep it in step.         *)
(***************************************************************************)
(***************************************************************************)
(* The run lifecycle of native-host protocol 1 (CONTRACT section 9), as   *)
(* implemented by fsm/run/run.go.                                          *)
(*                                                                         *)
(* A run request is received, then either rejected (a single final_result *)
(* with status error, no accepted) or accepted -> started -> streaming    *)
(* events -> settled -> exactly one final_result.  Accepted and started   *)
(* may settle directly (an error before any streaming event).  settled    *)
(* announces the status final_result will carry.                          *)
(*                                                                         *)
(* The variables phase and status are the Go machine's State {Phase,       *)
(* Status} (status = None where Go has "").  The actions are its triggers, *)
(* one for one: Accept, Reject, Start, Stream, Settle(status), Finalize.  *)
(* Done is the usual stuttering step of a terminated system: final is     *)
(* final, and any other state without a successor is a deadlock the        *)
(* checker reports.  fsm/run/graph_test.go enumerates the Go machine and   *)
(* requires its graph to equal GraphView's projection of this spec        *)
(* (tla/RunLifecycle.graph.json).                                          *)
(*                                                                         *)
(* The other variables are history variables: the machine does not have  *)
(* them, they record what was written so that the invariants can say what *)
(* the contract means.  They enable or disable no action, with one         *)
(* exception: Stream is bounded by the number of streaming events written *)
(* (MaxStream), for finiteness only; the machine has no such counter and  *)
(* graph_test.go bounds TrStream the same way.                            *)
(*                                                                         *)
(* events is the run's transcript: one record per event written, in order, *)
(* with the event's type and the status it carries (settled and           *)
(* final_result) or None.  "stream" stands for every streaming event type *)
(* of CONTRACT section 9 (model_delta, tool_start, ...): the lifecycle    *)
(* does not tell them apart.                                              *)
(*                                                                         *)
(* SAFETY ONLY.  tla-checker checks the invariants below in every         *)
(* reachable state; nothing here states or checks liveness (that an       *)
(* accepted run eventually gets its final_result).  The Go explorer in    *)
(* graph_test.go checks the finite stand-ins: every non-final state can   *)
(* still reach final, the only cycle is streaming's own, and no state but *)
(* final is stuck.                                                        *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxStream   \* bound on streaming events per run (finiteness only)

None == "none"  \* no status yet; Go's ""

ASSUME MaxStream \in Nat

Phases   == {"received", "accepted", "started", "streaming", "settled", "final"}
Statuses == {"completed", "blocked", "error"}   \* final_result.status

\* Event types of the transcript.
TAccepted == "accepted"
TStarted  == "started"
TStream   == "stream"          \* any streaming event
TSettled  == "settled"
TFinal    == "final_result"
Types     == {TAccepted, TStarted, TStream, TSettled, TFinal}
WithStatus == {TSettled, TFinal}   \* the types that carry a status

Ev(t, s) == [type |-> t, status |-> s]

\* The only event of a rejected run.
Rejection == Ev(TFinal, "error")

VARIABLES
    phase,    \* State.Phase
    status,   \* State.Status: set from settled on ("error" when rejected)
    \* history
    events,   \* the events written, in order (a sequence of Ev records)
    rejected  \* Reject fired

vars == <<phase, status, events, rejected>>

Init ==
    /\ phase = "received"
    /\ status = None
    /\ events = <<>>
    /\ rejected = FALSE

\* Indexes of the events of type t.
At(t) == {i \in DOMAIN events : events[i].type = t}

\* Some event before index i has type t.
Before(t, i) == \E j \in 1..(i - 1) : events[j].type = t

\* The run writes one event.
Emit(t, s) == events' = Append(events, Ev(t, s))

(***************************************************************************)
(* Actions: the triggers of fsm/run, with the same guards.                *)
(***************************************************************************)

\* TrAccept: validation passed; the accepted event.
Accept ==
    /\ phase = "received"
    /\ phase' = "accepted"
    /\ Emit(TAccepted, None)
    /\ UNCHANGED <<status, rejected>>

\* TrReject: validation failed; a single final_result error, no accepted.
Reject ==
    /\ phase = "received"
    /\ phase' = "final"
    /\ status' = "error"
    /\ Emit(TFinal, "error")
    /\ rejected' = TRUE

\* TrStart: the run begins working; the started event.
Start ==
    /\ phase = "accepted"
    /\ phase' = "started"
    /\ Emit(TStarted, None)
    /\ UNCHANGED <<status, rejected>>

\* TrStream: a streaming event (started -> streaming, then internal).
Stream ==
    /\ phase \in {"started", "streaming"}
    /\ Cardinality(At(TStream)) < MaxStream
    /\ phase' = "streaming"
    /\ Emit(TStream, None)
    /\ UNCHANGED <<status, rejected>>

\* TrSettle(s): the outcome is known; the settled event fixes the status.
Settle(s) ==
    /\ phase \in {"accepted", "started", "streaming"}
    /\ phase' = "settled"
    /\ status' = s
    /\ Emit(TSettled, s)
    /\ UNCHANGED rejected

\* TrFinalize: the final_result, with the status settled announced.
Finalize ==
    /\ phase = "settled"
    /\ phase' = "final"
    /\ Emit(TFinal, "completed")
    /\ UNCHANGED <<status, rejected>>

\* The run is over: nothing happens any more.
Done ==
    /\ phase = "final"
    /\ UNCHANGED vars

Next ==
    \/ Accept
    \/ Reject
    \/ Start
    \/ Stream
    \/ \E s \in Statuses : Settle(s)
    \/ Finalize
    \/ Done

(***************************************************************************)
(* Invariants.  Package spec (Go) has transcript predicates of the same   *)
(* names (spec.RunLifecycle runs them all); RejectedHasNoAccepted reads   *)
(* "rejected" there as "a final_result with no settled before it", the    *)
(* only way the machine writes a final_result without settled.            *)
(***************************************************************************)

TypeOK ==
    /\ phase \in Phases
    /\ status \in Statuses \cup {None}
    /\ DOMAIN events = 1..Len(events)
    /\ Len(events) <= 4 + MaxStream
    /\ \A i \in DOMAIN events :
           /\ events[i].type \in Types
           /\ IF events[i].type \in WithStatus
                THEN events[i].status \in Statuses
                ELSE events[i].status = None
    /\ rejected \in BOOLEAN

\* The run starts with accepted, or is a rejection: nothing but a rejecting
\* final_result comes before accepted; accepted is written at most once, and
\* first when it is written.
AcceptedFirst ==
    /\ \A i \in At(TAccepted) : i = 1
    /\ (Len(events) > 0 /\ events[1].type # TAccepted) => events[1] = Rejection

\* Streaming events come after started and before settled; started comes
\* once, right after the first event (accepted, by AcceptedFirst).
StartedBeforeStream ==
    /\ \A i \in At(TStarted) : i = 2
    /\ \A i \in At(TStream) : Before(TStarted, i) /\ ~Before(TSettled, i)

\* settled is written at most once; a final_result after accepted follows
\* it and carries its status; once settled, the machine's status is the
\* one settled announced.
SettledBeforeFinal ==
    /\ Cardinality(At(TSettled)) <= 1
    /\ \A i \in At(TFinal) :
           Before(TAccepted, i) =>
               \E j \in At(TSettled) : j < i /\ events[j].status = events[i].status
    /\ \A j \in At(TSettled) : status = events[j].status

\* final_result is the last event, hence written at most once, and it is
\* written exactly when the machine is final.
ExactlyOneFinal ==
    /\ \A i \in At(TFinal) : i = Len(events)
    /\ (phase = "final") = (Len(events) > 0 /\ events[Len(events)].type = TFinal)

\* A rejected run wrote no accepted.
RejectedHasNoAccepted == rejected => At(TAccepted) = {}

(***************************************************************************)
(* What fsm/run/graph_test.go compares with the Go machine: only the      *)
(* machine's variables, the history variables projected away.             *)
(***************************************************************************)
GraphView == [phase |-> phase, status |-> status]

=============================================================================
