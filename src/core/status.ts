/** A transaction's status, as stored and as the API reports it. */
export type TransactionStatus =
  | 'pending' | 'processing' | 'success' | 'failed' | 'failed_permanent'
  | 'pending_lroe' | 'pending_submission' | 'pending_batch' | 'cancelled'
  | 'delivered' | 'rejected' | 'delivery_error'
  | 'offline_pending' | 'failed_offline_grace_expired';
