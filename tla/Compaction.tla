----------------------------- MODULE Compaction -----------------------------
(***************************************************************************)
(* Compaction inside a run (issue 11), as the engine's compaction.go,      *)
(* overflow.go and native_compaction.go drive it: the step loop with       *)
(* compaction as an auxiliary operation.                                  *)
(*                                                                         *)
(* Before each model call the threshold check may start a compaction; a  *)
(* call may succeed (a final answer, or tool calls and another step), fail *)
(* for good, or overflow.  An overflow compacts and re-issues the step,   *)
(* once per step (logical turn): a second overflow in the same step ends  *)
(* the run with context_overflow.  A compaction is one auxiliary          *)
(* operation (the summarizer or the compaction endpoint, recovered by the *)
(* recovery loop of Recovery.tla, which this spec does not repeat): it    *)
(* succeeds, writing its checkpoint before compaction_finish, or is       *)
(* refused or fails, writing none.  A refused threshold compaction lets   *)
(* the run go on while the request still fits and ends it when it does    *)
(* not; a refused overflow compaction ends it.  Compaction events never   *)
(* settle the run: only the final result does, once.                     *)
(*                                                                         *)
(* events is the run's transcript of what matters here: compaction_start  *)
(* and compaction_finish (with their reason, the step, and ok) and the    *)
(* final result.  checkpoints counts the checkpoint records written.      *)
(* MaxSteps and MaxCompactions bound the model (finiteness only).         *)
(*                                                                         *)
(* fsm/compaction is the machine of this spec: its graph test enumerates *)
(* the Go machine and requires its graph to equal GraphView's projection *)
(* of this spec (tla/Compaction.graph.json).  step and over are the      *)
(* environment's (the step counter and the context's measure), which the *)
(* machine receives as inputs: the threshold check is given the context's *)
(* size and decides CheckCompact or CheckGo itself, so they are projected *)
(* away with the history variables.                                       *)
(*                                                                         *)
(* SAFETY ONLY, plus deadlock freedom, which the checker reports: no     *)
(* state but the final one is stuck, so a failed or refused compaction    *)
(* never leaves the run idle.                                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxSteps,        \* steps of one run
    MaxCompactions   \* threshold compactions of one run (finiteness only)

ASSUME MaxSteps \in Nat /\ MaxSteps >= 1 /\ MaxCompactions \in Nat

None == "none"

Phases   == {"check", "calling", "compacting", "done"}
Reasons  == {"threshold", "overflow"}
Statuses == {"completed", "error"}

TStart  == "compaction_start"
TFinish == "compaction_finish"
TFinal  == "final_result"
Types   == {TStart, TFinish, TFinal}

Ev(t, r, s, ok) == [type |-> t, reason |-> r, step |-> s, ok |-> ok]

VARIABLES
    phase,       \* where the loop is
    step,        \* the current step
    reason,      \* the reason of the compaction in flight, None otherwise
    overflowed,  \* this step already compacted for an overflow
    over,        \* the context is over the threshold
    status,      \* the run's final status, None until it ends
    \* history
    events,      \* compaction events and the final result, in order
    checkpoints  \* checkpoint records written

vars == <<phase, step, reason, overflowed, over, status, events, checkpoints>>

Init ==
    /\ phase = "check"
    /\ step = 1
    /\ reason = None
    /\ overflowed = FALSE
    /\ over \in BOOLEAN
    /\ status = None
    /\ events = <<>>
    /\ checkpoints = 0

At(t) == {i \in DOMAIN events : events[i].type = t}

Emit(e) == events' = Append(events, e)

\* The run ends with status s.
End(s) ==
    /\ phase' = "done"
    /\ status' = s
    /\ reason' = None

(***************************************************************************)
(* Actions.                                                               *)
(***************************************************************************)

\* The threshold check before a model call: over the threshold, compact.
CheckCompact ==
    /\ phase = "check"
    /\ over
    /\ Cardinality({i \in At(TStart) : events[i].reason = "threshold"}) < MaxCompactions
    /\ phase' = "compacting"
    /\ reason' = "threshold"
    /\ Emit(Ev(TStart, "threshold", step, FALSE))
    /\ UNCHANGED <<step, overflowed, over, status, checkpoints>>

\* Under the threshold (or out of model budget): call the model.
CheckGo ==
    /\ phase = "check"
    /\ (~over \/ Cardinality({i \in At(TStart) : events[i].reason = "threshold"}) >= MaxCompactions)
    /\ phase' = "calling"
    /\ UNCHANGED <<step, reason, overflowed, over, status, events, checkpoints>>

\* The call answers: the run completes.
CallAnswer ==
    /\ phase = "calling"
    /\ End("completed")
    /\ Emit(Ev(TFinal, None, step, FALSE))
    /\ UNCHANGED <<step, overflowed, over, checkpoints>>

\* The call asks for tools: their results are committed, the next step
\* begins with the check (the context may have grown past the threshold).
CallTools ==
    /\ phase = "calling"
    /\ step < MaxSteps
    /\ phase' = "check"
    /\ step' = step + 1
    /\ overflowed' = FALSE
    /\ over' \in BOOLEAN
    /\ UNCHANGED <<reason, status, events, checkpoints>>

\* The call fails for good (not an overflow).
CallFail ==
    /\ phase = "calling"
    /\ End("error")
    /\ Emit(Ev(TFinal, None, step, FALSE))
    /\ UNCHANGED <<step, overflowed, over, checkpoints>>

\* The call overflows: the first time in this step, compact and retry; the
\* second time, the run ends with context_overflow.
CallOverflow ==
    /\ phase = "calling"
    /\ IF ~overflowed
         THEN /\ phase' = "compacting"
              /\ reason' = "overflow"
              /\ overflowed' = TRUE
              /\ Emit(Ev(TStart, "overflow", step, FALSE))
              /\ UNCHANGED status
         ELSE /\ End("error")
              /\ Emit(Ev(TFinal, None, step, FALSE))
              /\ UNCHANGED overflowed
    /\ UNCHANGED <<step, over, checkpoints>>

\* The compaction succeeds: the checkpoint is written, then
\* compaction_finish; the call (re-issued after an overflow) goes out.
CompactOK ==
    /\ phase = "compacting"
    /\ checkpoints' = checkpoints + 1
    /\ Emit(Ev(TFinish, reason, step, TRUE))
    /\ phase' = "calling"
    /\ reason' = None
    /\ over' = FALSE
    /\ UNCHANGED <<step, overflowed, status>>

\* The compaction is refused or fails (or is canceled): no checkpoint. A
\* threshold refusal goes on while the request fits (fits), else the run
\* ends; an overflow refusal ends it.
CompactRefused(fits) ==
    /\ phase = "compacting"
    /\ IF reason = "threshold" /\ fits
         THEN /\ phase' = "calling"
              /\ reason' = None
              /\ events' = Append(events, Ev(TFinish, reason, step, FALSE))
              /\ UNCHANGED status
         ELSE /\ End("error")
              /\ events' = events \o <<Ev(TFinish, reason, step, FALSE), Ev(TFinal, None, step, FALSE)>>
    /\ UNCHANGED <<step, overflowed, over, checkpoints>>

\* The run is over.
Done ==
    /\ phase = "done"
    /\ UNCHANGED vars

Next ==
    \/ CheckCompact
    \/ CheckGo
    \/ CallAnswer
    \/ CallTools
    \/ CallFail
    \/ CallOverflow
    \/ CompactOK
    \/ \E fits \in BOOLEAN : CompactRefused(fits)
    \/ Done

(***************************************************************************)
(* Invariants.                                                            *)
(***************************************************************************)

TypeOK ==
    /\ phase \in Phases
    /\ step \in 1..MaxSteps
    /\ reason \in Reasons \cup {None}
    /\ overflowed \in BOOLEAN
    /\ over \in BOOLEAN
    /\ status \in Statuses \cup {None}
    /\ checkpoints \in Nat
    /\ DOMAIN events = 1..Len(events)
    /\ \A i \in DOMAIN events : events[i].type \in Types

\* compaction_start and compaction_finish come in pairs with the same
\* reason: a finish right after its start, a start followed by its finish
\* unless the compaction is still running.
Paired ==
    /\ \A i \in At(TFinish) :
           i > 1 /\ events[i - 1].type = TStart /\ events[i - 1].reason = events[i].reason
    /\ \A i \in At(TStart) :
           IF i = Len(events) THEN phase = "compacting" ELSE events[i + 1].type = TFinish

\* A checkpoint is written exactly for each successful compaction.
CheckpointOnlyOnSuccess ==
    checkpoints = Cardinality({i \in At(TFinish) : events[i].ok})

\* At most one overflow compaction per step (logical turn).
OneOverflowCompactionPerStep ==
    \A i, j \in At(TStart) :
        (events[i].reason = "overflow" /\ events[j].reason = "overflow" /\ events[i].step = events[j].step) => i = j

\* The threshold check runs once per step, before the call: at most one
\* threshold compaction per step (a refused one holds off instead of
\* checking again), and none after the step's overflow compaction (the
\* overflow's retry goes out as it is).
OneThresholdCompactionPerStep ==
    \A i, j \in At(TStart) :
        (events[i].reason = "threshold" /\ events[j].reason = "threshold" /\ events[i].step = events[j].step) => i = j

ThresholdBeforeOverflow ==
    \A i, j \in At(TStart) :
        (events[i].reason = "overflow" /\ events[j].reason = "threshold" /\ events[i].step = events[j].step) => j < i

\* A refused overflow compaction ends the run: its compaction_finish is
\* followed at once by the final result.
RefusedOverflowEndsRun ==
    \A i \in At(TFinish) :
        (events[i].reason = "overflow" /\ ~events[i].ok) => (i < Len(events) /\ events[i + 1].type = TFinal)

\* The final result is written once, last, exactly when the run is done;
\* no compaction event settles the run.
ExactlyOneFinal ==
    /\ \A i \in At(TFinal) : i = Len(events)
    /\ (phase = "done") = (At(TFinal) # {})
    /\ (phase = "done") = (status # None)

(***************************************************************************)
(* The machine's variables, for the graph test (fsm/compaction).          *)
(***************************************************************************)
GraphView == [phase |-> phase, reason |-> reason, overflowed |-> overflowed, status |-> status]

=============================================================================
