; OOM117 candidates: an assignment whose value concatenates, directly or in one branch of a conditional.
;   preds = torch.cat([preds, logits])    feats = x if feats is None else torch.cat((feats, x))
(assignment
  left: [(identifier) (attribute)] @target
  right: [
    (call function: [(attribute attribute: (identifier) @fn) (identifier) @fn]) @call
    (conditional_expression (call function: [(attribute attribute: (identifier) @fn) (identifier) @fn]) @call)
  ]
  (#match? @fn "^(cat|concat|concatenate|vstack|hstack|row_stack|column_stack|dstack)$")) @assignment
