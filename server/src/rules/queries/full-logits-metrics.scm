; OOM109 candidates: a call that passes compute_metrics= (a Trainer, once the callee is resolved in code).
; needs: compute_metrics
(call
  function: [(identifier) (attribute)] @callee
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @keyword))
  (#eq? @keyword "compute_metrics")) @call
