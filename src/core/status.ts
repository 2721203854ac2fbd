/**
 * The transaction status machine: one table of statuses and of the transitions between
 * them, with who may cause each (spec "States and transitions", DECISIONS "Statuses").
 *
 * The core owns the statuses every system shares; a fiscal system adds its own (a
 * batch's in-flight status, the outcomes of a later notification, an offline fallback…)
 * through its plug-in (`FiscalSystem.statuses`), and the registry builds the one machine from
 * both (countries/registry.ts `statuses`). Routes validate filters with it, services
 * and jobs take their compare-and-set `from` lists from it, the batch and SQL read the
 * groups (open, in a batch) from it: no list of statuses is written anywhere else.
 */

/** The statuses every system shares. */
export const CORE_STATUSES = [
  'pending', 'processing', 'success', 'failed', 'failed_permanent', 'pending_submission', 'pending_batch', 'cancelled',
] as const;
export type CoreStatus = (typeof CORE_STATUSES)[number];
/** A core status, or one a fiscal system declares (its plug-in's `statuses`). */
export type TransactionStatus = CoreStatus | (string & {});

/**
 * Who causes a transition:
 * - `create`: the transaction is stored (the system's initial status);
 * - `submission`: a submission attempt (the worker) and the authority's answer to it;
 * - `batch`: a batch processor (claims, answers, releases);
 * - `authority`: a message the authority sends later (a notification, a polled result);
 * - `cancellation`: the transaction's cancellation was accepted (its original is cancelled).
 */
export type StatusActor = 'create' | 'submission' | 'batch' | 'authority' | 'cancellation';

/** What a status means to shared code. */
export interface StatusSpec {
  name: string;
  /** A submission attempt may still change it (the worker takes it up, retries it). */
  open?: boolean;
  /** Stays as it is while a submission runs, instead of `processing` (its receipt already says "transmitted later"). */
  keptWhileSubmitting?: boolean;
  /** A cancellation may be issued from it. */
  cancellable?: boolean;
  /**
   * With `cancellable`: still on its way to the authority, which will hold it (an offline
   * fallback's status, retried until the authority registers it). Its accepted cancellation does not
   * make it `cancelled` there (it would stop being sent): it becomes `cancelled` once its
   * own submission is accepted (services/cancellation.ts `cancelIfCancellationAccepted`).
   */
  cancelledOnceAccepted?: boolean;
  /**
   * Moves as `pending` does: every transition from `pending` (whoever declared it: an offline
   * fallback, a notification, a result poll) is one from it too (Embedded-Local's
   * `pending_submission`: a queued record, under another name).
   */
  asPending?: boolean;
  /** Accepted by the authority, or final at creation: a cancellation in it cancels its original. */
  accepted?: boolean;
  /**
   * Final and not accepted: the authority refused it, or its retries ran out. A cancellation
   * in it did not cancel its original, which may be cancelled again.
   */
  refused?: boolean;
  /** Inside a batch that was sent, awaiting the authority's answer (a batch processor's claim). */
  inBatch?: boolean;
  /** Where the spec's list names it, when not after the core's and the earlier systems' (`names`). */
  listedAfter?: string;
}

/**
 * Transitions: from any of `from` to any of `to`, caused by `by`. `from` may also be
 * `new` (a transaction being stored) or `cancellable` (every status declared cancellable,
 * whichever plug-in declared it).
 */
export interface TransitionSpec {
  by: StatusActor;
  from: readonly string[] | 'new' | 'cancellable';
  to: readonly string[];
}

/** A plug-in's contribution: its own statuses and the transitions into and out of them. */
export interface StatusContribution {
  statuses: readonly StatusSpec[];
  transitions: readonly TransitionSpec[];
}

/** The open statuses, named once for the core table. */
const OPEN = ['pending', 'processing', 'failed'] as const;

export const CORE_STATUS_TABLE: StatusContribution = {
  statuses: [
    { name: 'pending', open: true },
    { name: 'processing', open: true },
    { name: 'success', cancellable: true, accepted: true },
    { name: 'failed', open: true },
    { name: 'failed_permanent', refused: true },
    // Signed locally by an embedded engine (or the local host), waiting in its local queue
    // (DECISIONS "Statuses"): submitted like `pending`, and it stays so while its submission
    // runs and between retries (the POS may still cancel it), until accepted or refused. A
    // cancellation of it is sent behind it and cancels it once both are accepted.
    { name: 'pending_submission', open: true, asPending: true, keptWhileSubmitting: true, cancellable: true, cancelledOnceAccepted: true },
    // Signed, waiting for the next batch (a system that sends in batches, per location).
    { name: 'pending_batch', cancellable: true },
    { name: 'cancelled' },
  ],
  transitions: [
    { by: 'create', from: 'new', to: ['pending', 'success', 'pending_batch', 'pending_submission'] },
    // A retriable failure leaves a queued embedded record as it is (its retry is due later).
    { by: 'submission', from: ['pending_submission'], to: ['pending_submission'] },
    { by: 'submission', from: OPEN, to: ['processing', 'pending', 'success', 'failed', 'failed_permanent'] },
    { by: 'batch', from: ['pending_batch'], to: ['success'] },
    { by: 'cancellation', from: 'cancellable', to: ['cancelled'] },
  ],
};

export class StatusMachine {
  private readonly specs = new Map<string, StatusSpec>();
  private readonly moves: { by: StatusActor; from: readonly string[] | 'new'; to: readonly string[] }[] = [];
  private readonly sourcesOf = new Map<string, readonly string[]>();
  private readonly groups = new Map<string, readonly string[]>();

  constructor(parts: readonly StatusContribution[]) {
    for (const part of parts) {
      for (const s of part.statuses) {
        if (this.specs.has(s.name)) throw new Error(`status ${s.name} is declared twice`);
        this.specs.set(s.name, s);
      }
    }
    for (const part of parts) {
      for (const t of part.transitions) {
        // `cancellable` as a source: every status that may be cancelled, whoever declared it,
        // except those that become `cancelled` only once accepted (they pass through `success`).
        const declared = t.from === 'cancellable' ? this.where((s) => s.cancellable && !s.cancelledOnceAccepted) : t.from;
        // A status that moves as `pending` does joins every transition from `pending`.
        const from = declared !== 'new' && declared.includes('pending') ? [...declared, ...this.where((s) => s.asPending)] : declared;
        for (const name of [...(from === 'new' ? [] : from), ...t.to]) {
          if (!this.specs.has(name)) throw new Error(`transition names an undeclared status ${name}`);
        }
        this.moves.push({ ...t, from });
      }
    }
  }

  /**
   * Every status, in the spec's order: the core's, then each system's in registry order,
   * except those placed `listedAfter` another (the list filter accepts these, and its
   * error message lists them in this order).
   */
  get names(): string[] {
    const out: string[] = [];
    for (const s of this.specs.values()) {
      if (s.listedAfter === undefined) out.push(s.name);
    }
    for (const s of this.specs.values()) {
      if (s.listedAfter !== undefined) out.splice(out.indexOf(s.listedAfter) + 1, 0, s.name);
    }
    return out;
  }

  isKnown(status: string): boolean {
    return this.specs.has(status);
  }

  /** Statuses a submission may still change. */
  get open(): readonly string[] {
    return this.group('open', (s) => s.open);
  }

  /** Open statuses that stay as they are while a submission runs. */
  get keptWhileSubmitting(): readonly string[] {
    return this.group('keptWhileSubmitting', (s) => s.keptWhileSubmitting);
  }

  /** Statuses a cancellation may be issued from (DECISIONS "Statuses"). */
  get cancellable(): readonly string[] {
    return this.group('cancellable', (s) => s.cancellable);
  }

  /** Statuses of records inside a batch that was sent. */
  get inBatch(): readonly string[] {
    return this.group('inBatch', (s) => s.inBatch);
  }

  /** Accepted by the authority, or final at creation. */
  isAccepted(status: string): boolean {
    return this.specs.get(status)?.accepted === true;
  }

  /** Final and not accepted (refused, out of retries). */
  isRefused(status: string): boolean {
    return this.specs.get(status)?.refused === true;
  }

  /** The refused statuses, whoever declared them. */
  get refused(): readonly string[] {
    return this.group('refused', (s) => s.refused);
  }

  /** Whether `by` may move a transaction from `from` to `to`. */
  allows(by: StatusActor, from: string | 'new', to: string): boolean {
    return this.moves.some((m) => m.by === by && m.to.includes(to) && (m.from === 'new' ? from === 'new' : m.from.includes(from)));
  }

  /**
   * The statuses from which `by` may move a transaction to `to`: the compare-and-set list
   * of the update that does it (a concurrent change to anything else wins). Throws on a
   * transition the table does not allow: a bug, never a client error.
   */
  sources(to: string, by: StatusActor): readonly string[] {
    // Asked on every update a job or a batch makes: answered once per pair.
    const key = `${by}\u0000${to}`;
    const known = this.sourcesOf.get(key);
    if (known) return known;
    const from = [...new Set(this.moves.filter((m) => m.by === by && m.to.includes(to) && m.from !== 'new').flatMap((m) => (m.from === 'new' ? [] : m.from)))];
    if (from.length === 0) throw new Error(`no transition to ${to} by ${by}`);
    this.sourcesOf.set(key, Object.freeze(from));
    return from;
  }

  /** A group of statuses, computed once (the table does not change after construction). */
  private group(name: string, test: (s: StatusSpec) => boolean | undefined): readonly string[] {
    let g = this.groups.get(name);
    if (!g) this.groups.set(name, (g = Object.freeze(this.where(test))));
    return g;
  }

  private where(test: (s: StatusSpec) => boolean | undefined): string[] {
    return [...this.specs.values()].filter((s) => test(s)).map((s) => s.name);
  }
}
