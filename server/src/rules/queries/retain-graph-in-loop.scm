; OOM107 candidates: a backward call that passes retain_graph=True.
; needs: retain_graph
;   loss.backward(retain_graph=True)    scaler.scale(loss).backward(retain_graph=True)
(call
  function: (attribute attribute: (identifier) @method)
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @keyword
      value: (true)))
  (#eq? @method "backward")
  (#eq? @keyword "retain_graph")) @call
