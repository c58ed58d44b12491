--------------------------- MODULE NativeSteering ---------------------------
(***************************************************************************)
(* The settlement of one native steering intent on a qualified route      *)
(* (issue 14 section 2: Responses over WebSocket, route metadata saying    *)
(* the model supports steering, no provider-side compaction, no hard       *)
(* cumulative ceilings), as implemented by fsm/steering/native.go.         *)
(*                                                                         *)
(* RunControl.Steer on a qualified route first appends and syncs an       *)
(* intent record (Record), then sends response.steer (Dispatch).  The     *)
(* server answers response.steer.accepted (Accepted: it owns the input,    *)
(* nothing is committed yet), response.steer.pending (Pending: the         *)
(* response stopped for client-owned tool output; the host runs the tools  *)
(* and sends exactly one response.create with their outputs and the same   *)
(* previous_response_id, SendCreate, never the steer input again) or       *)
(* response.steer.failed (Failed: the input comes back and goes to the     *)
(* ordinary queue).  The successor's response.created after the completed  *)
(* prefix is the commit point (Successor: the intent is linked and         *)
(* steering_delivered mode native is emitted); the intent is settled once  *)
(* the successor's usage is accounted (Usage).  A disconnect, a crash or a *)
(* missing acknowledgement after the record (Lost) leaves the outcome      *)
(* unknown: the intent stays unsettled for good, and every later run on    *)
(* the session (LaterRun) ends blocked before any provider I/O.            *)
(*                                                                         *)
(* phase is the Go machine's State.Phase.  The other variables are history *)
(* variables, for the invariants only: they enable or disable no action.   *)
(* The phases delivered, failed and unknown are final: only LaterRun is    *)
(* taken there, as a self-loop.  fsm/steering/native_graph_test.go         *)
(* enumerates the Go machine and requires its graph to equal GraphView's   *)
(* projection of this spec (tla/NativeSteering.graph.json).                *)
(*                                                                         *)
(* SAFETY ONLY, as for Steering.tla; the graph test checks the finite     *)
(* stand-ins (no stuck state, every state can reach a final phase).        *)
(***************************************************************************)
EXTENDS Naturals

Phases == {"idle", "recorded", "dispatched", "accepted", "pending", "created",
           "linked", "delivered", "failed", "unknown"}

\* The phases where the intent is settled, and the final ones.
Settled == {"delivered", "failed"}
Final   == Settled \cup {"unknown"}

\* A disconnect, crash or missing acknowledgement can happen in these.
Live == {"recorded", "dispatched", "accepted", "pending", "created", "linked"}

VARIABLES
    phase,         \* State.Phase
    \* history
    recorded,      \* the intent record was appended and synced
    inputSends,    \* frames sent that carry the steer input
    creates,       \* explicit response.create frames sent for this intent
    sawPending,    \* response.steer.pending was received
    nativeDelivered, \* steering_delivered (native) was emitted, times
    requeued,      \* the input was handed to the ordinary queue, times
    ranUnsettled   \* a later run got past the check while the intent was unsettled

vars == <<phase, recorded, inputSends, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

Init ==
    /\ phase = "idle"
    /\ recorded = FALSE
    /\ inputSends = 0
    /\ creates = 0
    /\ sawPending = FALSE
    /\ nativeDelivered = 0
    /\ requeued = 0
    /\ ranUnsettled = FALSE

\* Record: append and sync the intent (id, response steered, input digest).
Record ==
    /\ phase = "idle"
    /\ phase' = "recorded"
    /\ recorded' = TRUE
    /\ UNCHANGED <<inputSends, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* Dispatch: send response.steer, once, after the record.
Dispatch ==
    /\ phase = "recorded"
    /\ phase' = "dispatched"
    /\ inputSends' = inputSends + 1
    /\ UNCHANGED <<recorded, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* Accepted: response.steer.accepted; the steer id is recorded.
Accepted ==
    /\ phase = "dispatched"
    /\ phase' = "accepted"
    /\ UNCHANGED <<recorded, inputSends, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* Pending: response.steer.pending; the host runs its tools as usual.
Pending ==
    /\ phase \in {"dispatched", "accepted"}
    /\ phase' = "pending"
    /\ sawPending' = TRUE
    /\ UNCHANGED <<recorded, inputSends, creates, nativeDelivered, requeued, ranUnsettled>>

\* SendCreate: exactly one response.create with the tool outputs and the
\* same previous_response_id; the server prepends the queued input.
SendCreate ==
    /\ phase = "pending"
    /\ phase' = "created"
    /\ creates' = creates + 1
    /\ UNCHANGED <<recorded, inputSends, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* Successor: the successor's response.created after the completed prefix:
\* the commit point.  The intent is linked, steering_delivered is emitted.
Successor ==
    /\ phase \in {"accepted", "created"}
    /\ phase' = "linked"
    /\ nativeDelivered' = nativeDelivered + 1
    /\ UNCHANGED <<recorded, inputSends, creates, sawPending, requeued, ranUnsettled>>

\* Usage: the successor's usage is accounted; the intent is settled.
Usage ==
    /\ phase = "linked"
    /\ phase' = "delivered"
    /\ UNCHANGED <<recorded, inputSends, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* Failed: response.steer.failed, before any commit; settled as failed and
\* the returned input goes to the ordinary queue.
Failed ==
    /\ phase \in {"dispatched", "accepted", "pending", "created"}
    /\ phase' = "failed"
    /\ requeued' = requeued + 1
    /\ UNCHANGED <<recorded, inputSends, creates, sawPending, nativeDelivered, ranUnsettled>>

\* Lost: disconnect, crash or missing acknowledgement: the outcome is
\* unknown and the intent stays unsettled.  Nothing is replayed.
Lost ==
    /\ phase \in Live
    /\ phase' = "unknown"
    /\ UNCHANGED <<recorded, inputSends, creates, sawPending, nativeDelivered, requeued, ranUnsettled>>

\* LaterRun: a later run on the session, after this one ended.  It does
\* provider I/O only when the intent is settled; otherwise it is blocked
\* (unsettled_native_steering).
LaterRun ==
    /\ phase \in Final
    /\ LET proceeds == phase \in Settled   \* otherwise blocked, no provider I/O
       IN  ranUnsettled' = (ranUnsettled \/ (proceeds /\ phase \notin Settled))
    /\ UNCHANGED <<phase, recorded, inputSends, creates, sawPending, nativeDelivered, requeued>>

Next ==
    \/ Record
    \/ Dispatch
    \/ Accepted
    \/ Pending
    \/ SendCreate
    \/ Successor
    \/ Usage
    \/ Failed
    \/ Lost
    \/ LaterRun

(***************************************************************************)
(* Invariants.                                                             *)
(***************************************************************************)

TypeOK ==
    /\ phase \in Phases
    /\ recorded \in BOOLEAN
    /\ inputSends \in 0..2
    /\ creates \in 0..2
    /\ sawPending \in BOOLEAN
    /\ nativeDelivered \in 0..2
    /\ requeued \in 0..2
    /\ ranUnsettled \in BOOLEAN

\* The steer input leaves the host only after its intent is durable.
DurableBeforeSend == inputSends > 0 => recorded

\* The steer input is sent at most once: the create after pending carries
\* the tool outputs only.
InputOnce == inputSends <= 1

\* At most one explicit response.create, and only after pending.
OneCreate == creates <= 1 /\ (creates > 0 => sawPending)

\* The input reaches the conversation at most once, natively or through
\* the queue.
DeliveredOnce == nativeDelivered + requeued <= 1

\* A settled intent accounts for its input: delivered natively, or failed
\* and handed to the queue; the queue gets it only on failure (never on an
\* unknown outcome: input is never replayed).
SettledAccounted ==
    /\ phase = "delivered" => (nativeDelivered = 1 /\ requeued = 0)
    /\ phase = "failed" => (requeued = 1 /\ nativeDelivered = 0)
    /\ requeued > 0 => phase = "failed"

\* No later run gets to provider I/O while the intent is unsettled.
NoRunWhileUnsettled == ~ranUnsettled

(***************************************************************************)
(* What fsm/steering/native_graph_test.go compares with the Go machine.   *)
(***************************************************************************)
GraphView == [phase |-> phase]

=============================================================================
