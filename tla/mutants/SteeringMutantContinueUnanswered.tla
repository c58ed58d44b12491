------------------ MODULE SteeringMutantContinueUnanswered ------------------
(***************************************************************************)
(* MUTANT of Steering.tla: tla/check.mjs requires it to fail.              *)
(* Every turn that does not complete the run returns continue, answered or *)
(* not, so the driver is told to call the model again when nothing was     *)
(* delivered for it to answer.                                             *)
(* EXPECT: ContinueOnlyToDeliver                                           *)
(* Everything else is a copy of Steering.tla; keep it in step.             *)
(***************************************************************************)
(***************************************************************************)
(* The settlement of a run's queued messages (CONTRACT section 15:        *)
(* RunControl.Steer and RunControl.FollowUp), as implemented by            *)
(* fsm/steering/steering.go.                                               *)
(*                                                                         *)
(* While the run is open the application may submit steering messages     *)
(* and follow-ups at any time, and the run reports its boundaries: a tool  *)
(* call finished with more calls of the turn to come (AfterTool), or the   *)
(* model's turn and its tool calls are done (AfterTurn; answered: the      *)
(* model made no tool call).  Pending steering goes in at the next         *)
(* boundary, skipping the turn's remaining tool calls when that boundary   *)
(* is a tool's.  Follow-ups wait until the run would otherwise complete:   *)
(* an answered turn with no steering pending delivers all of them and the  *)
(* run goes on.  An answered turn with nothing pending completes the run;  *)
(* Close ends it at any point, dropping whatever is still pending.         *)
(*                                                                         *)
(* The variables phase, steering and followUps are the Go machine's State  *)
(* {Phase, Steering, FollowUps} (pending counts; the driver keeps the      *)
(* texts).  The actions are its triggers, one for one: Steer, FollowUp,    *)
(* AfterTool, AfterTurn(answered), Close.  Done is the usual stuttering    *)
(* step of a terminated system: closed is final, and any other state       *)
(* without a successor is a deadlock the checker reports.                  *)
(* fsm/steering/graph_test.go enumerates the Go machine and requires its   *)
(* graph to equal GraphView's projection of this spec                      *)
(* (tla/Steering.graph.json).                                              *)
(*                                                                         *)
(* The other variables are history variables: the machine does not have   *)
(* them, they record what was submitted and what the steps returned so     *)
(* that the invariants can say what the contract means.  They enable or    *)
(* disable no action, with one exception: Steer and FollowUp are bounded   *)
(* by the number of messages submitted in all (MaxSubmit), for finiteness  *)
(* only; the machine has no such counter and graph_test.go bounds          *)
(* TrSteer and TrFollowUp the same way.                                    *)
(*                                                                         *)
(* events is the transcript of effects, in the order the machine returns   *)
(* them: one record per effect with its kind and the number of messages    *)
(* it covers (0 for the kinds that cover none).                            *)
(*                                                                         *)
(* SAFETY ONLY.  tla-checker checks the invariants below in every          *)
(* reachable state; nothing here states or checks liveness (that every     *)
(* message is eventually settled).  The Go explorer in graph_test.go       *)
(* checks the finite stand-ins: no state but closed is stuck, closed is    *)
(* absorbing, every state can still close and can still complete by       *)
(* answered turns alone, and without new submissions the only cycles are   *)
(* boundaries that have nothing to do.                                     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    MaxSubmit   \* bound on messages submitted per run, both kinds (finiteness only)

ASSUME MaxSubmit \in Nat

Phases == {"open", "closed"}

\* Effect kinds of the transcript (steering.EffectKind).
KSkip      == "skip_tools"
KSteering  == "deliver_steering"
KFollowUps == "deliver_follow_ups"
KContinue  == "continue"
KComplete  == "complete"
KDrop      == "drop"
Kinds      == {KSkip, KSteering, KFollowUps, KContinue, KComplete, KDrop}
Counted    == {KSteering, KFollowUps, KDrop}   \* the kinds whose n counts messages

Ev(k, n) == [kind |-> k, n |-> n]

VARIABLES
    phase,               \* State.Phase
    steering,            \* State.Steering: steering messages pending
    followUps,           \* State.FollowUps: follow-ups pending
    \* history
    events,              \* the effects returned, in order (a sequence of Ev records)
    submittedSteering,   \* steering messages submitted
    submittedFollowUps,  \* follow-ups submitted
    overtaken            \* follow-ups were delivered at a boundary reached with steering pending

vars == <<phase, steering, followUps, events, submittedSteering, submittedFollowUps, overtaken>>

Init ==
    /\ phase = "open"
    /\ steering = 0
    /\ followUps = 0
    /\ events = <<>>
    /\ submittedSteering = 0
    /\ submittedFollowUps = 0
    /\ overtaken = FALSE

\* Messages submitted so far, both kinds.
Submitted == submittedSteering + submittedFollowUps

\* Indexes of the records of kind k.
At(k) == {i \in DOMAIN events : events[i].kind = k}

\* The messages the records of kind k cover, added up.
Total(k) ==
    LET sum[i \in 0..Len(events)] ==
            IF i = 0 THEN 0
            ELSE sum[i - 1] + (IF events[i].kind = k THEN events[i].n ELSE 0)
    IN  sum[Len(events)]

\* One step returns the effects es (possibly none).  overtaken notes a
\* follow-up delivery in a step taken while steering was pending.
Write(es) ==
    /\ events' = events \o es
    /\ overtaken' = (overtaken \/ (steering > 0 /\ \E i \in DOMAIN es : es[i].kind = KFollowUps))

(***************************************************************************)
(* Actions: the triggers of fsm/steering, with the same guards.           *)
(***************************************************************************)

\* TrSteer: the application submits a steering message.
Steer ==
    /\ phase = "open"
    /\ Submitted < MaxSubmit
    /\ steering' = steering + 1
    /\ submittedSteering' = submittedSteering + 1
    /\ Write(<<>>)
    /\ UNCHANGED <<phase, followUps, submittedFollowUps>>

\* TrFollowUp: the application submits a follow-up.
FollowUp ==
    /\ phase = "open"
    /\ Submitted < MaxSubmit
    /\ followUps' = followUps + 1
    /\ submittedFollowUps' = submittedFollowUps + 1
    /\ Write(<<>>)
    /\ UNCHANGED <<phase, steering, submittedSteering>>

\* TrAfterTool: a tool call finished and more remain.  Pending steering is
\* delivered and the remaining calls skipped; otherwise nothing happens
\* (follow-ups keep waiting).
AfterTool ==
    /\ phase = "open"
    /\ IF steering > 0
         THEN /\ Write(<<Ev(KSkip, 0), Ev(KSteering, steering)>>)
              /\ steering' = 0
         ELSE /\ Write(<<>>)
              /\ UNCHANGED steering
    /\ UNCHANGED <<phase, followUps, submittedSteering, submittedFollowUps>>

\* TrAfterTurn(answered): the turn and its tool calls are done.  An answered
\* turn with nothing pending completes the run.  Otherwise pending steering
\* is delivered, or else, if the turn was answered, every pending follow-up;
\* an answered turn that delivered goes on (continue).
AfterTurn(answered) ==
    /\ phase = "open"
    /\ IF answered /\ steering = 0 /\ followUps = 0
         THEN /\ phase' = "closed"
              /\ Write(<<Ev(KComplete, 0)>>)
              /\ UNCHANGED <<steering, followUps>>
         ELSE LET delivery == IF steering > 0 THEN <<Ev(KSteering, steering)>>
                              ELSE IF answered THEN <<Ev(KFollowUps, followUps)>>
                              ELSE <<>>
                  goOn     == <<Ev(KContinue, 0)>>
              IN  /\ Write(delivery \o goOn)
                  /\ steering' = 0
                  /\ followUps' = IF steering = 0 /\ answered THEN 0 ELSE followUps
                  /\ UNCHANGED phase
    /\ UNCHANGED <<submittedSteering, submittedFollowUps>>

\* TrClose: the run ends without completing here; what is pending is
\* dropped, in one drop effect when there is any.
Close ==
    /\ phase = "open"
    /\ phase' = "closed"
    /\ Write(IF steering + followUps > 0 THEN <<Ev(KDrop, steering + followUps)>> ELSE <<>>)
    /\ steering' = 0
    /\ followUps' = 0
    /\ UNCHANGED <<submittedSteering, submittedFollowUps>>

\* The machine is closed: nothing happens any more.
Done ==
    /\ phase = "closed"
    /\ UNCHANGED vars

Next ==
    \/ Steer
    \/ FollowUp
    \/ AfterTool
    \/ \E answered \in BOOLEAN : AfterTurn(answered)
    \/ Close
    \/ Done

(***************************************************************************)
(* Invariants.                                                             *)
(***************************************************************************)

\* Each deliver or drop effect covers at least one message; the other
\* effects cover none.  At most one effect per message delivered, one more
\* beside each delivery (skip_tools or continue) and one closing effect.
TypeOK ==
    /\ phase \in Phases
    /\ steering \in 0..MaxSubmit
    /\ followUps \in 0..MaxSubmit
    /\ submittedSteering \in 0..MaxSubmit
    /\ submittedFollowUps \in 0..MaxSubmit
    /\ Submitted <= MaxSubmit
    /\ overtaken \in BOOLEAN
    /\ DOMAIN events = 1..Len(events)
    /\ Len(events) <= 2 * MaxSubmit + 1
    /\ \A i \in DOMAIN events :
           /\ events[i].kind \in Kinds
           /\ IF events[i].kind \in Counted
                THEN events[i].n \in 1..MaxSubmit
                ELSE events[i].n = 0

\* No message is lost or settled twice: every message the application
\* submitted is still pending, or the driver was told once to deliver it or
\* that it was dropped.  A drop effect covers both kinds, so drops are
\* counted together; deliveries and pending counts stay within what was
\* submitted of their own kind.
Conservation ==
    /\ Submitted = Total(KSteering) + Total(KFollowUps) + Total(KDrop) + steering + followUps
    /\ Total(KSteering) + steering <= submittedSteering
    /\ Total(KFollowUps) + followUps <= submittedFollowUps

\* Once the run is over nothing waits any more: the application has been
\* told the fate of every message.
ClosedIsSettled == phase = "closed" => (steering = 0 /\ followUps = 0)

\* Steering is never overtaken: a boundary reached while steering is
\* pending delivers no follow-up; follow-ups wait for a later answered turn.
SteeringFirst == ~overtaken

\* Follow-ups go in only where the run would otherwise have completed: each
\* follow-up delivery is followed at once by continue, which only an
\* answered turn returns, so the model answers them.
FollowUpsOnlyAtCompletion ==
    \A i \in At(KFollowUps) : i < Len(events) /\ events[i + 1].kind = KContinue

\* An answered turn does not end the run only because something was just
\* delivered for the model to answer: continue follows a delivery at once.
ContinueOnlyToDeliver ==
    \A i \in At(KContinue) : i > 1 /\ events[i - 1].kind \in {KSteering, KFollowUps}

\* The turn's remaining tool calls are skipped only to let steering in:
\* skip_tools is followed at once by the delivery of steering.
SkipOnlyForSteering ==
    \A i \in At(KSkip) : i < Len(events) /\ events[i + 1].kind = KSteering /\ events[i + 1].n >= 1

\* Closing is final, and a completed run lost nothing: complete or drop is
\* the last effect (so at most one of them is returned), the machine is
\* closed once either is, and a run that completed delivered every message
\* it was given.
CompleteOnlyWhenEmpty ==
    /\ \A i \in At(KComplete) \cup At(KDrop) : i = Len(events)
    /\ At(KComplete) \cup At(KDrop) # {} => phase = "closed"
    /\ At(KComplete) # {} =>
           (Total(KSteering) = submittedSteering /\ Total(KFollowUps) = submittedFollowUps)

(***************************************************************************)
(* What fsm/steering/graph_test.go compares with the Go machine: only the *)
(* machine's variables, the history variables projected away.             *)
(***************************************************************************)
GraphView == [phase |-> phase, steering |-> steering, followUps |-> followUps]

=============================================================================
