// How much the engine analyses. Checked before any work: a larger document is stored but never parsed, so it
// cannot hold up the others.
/** Characters of a document or file that are parsed and analysed; larger ones are skipped with a message. */
export const MAX_ANALYZED_CHARACTERS = 2_000_000;
