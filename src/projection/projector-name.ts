/**
 * The projector's durable consumer on the event stream (and its checkpoint row). In a file of its own
 * so the metrics can name it: the projector imports the metrics, and an import back would be a cycle.
 */
export const PROJECTOR = 'projector';
