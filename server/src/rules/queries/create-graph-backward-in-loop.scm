; OOM116 candidates: a backward call that passes create_graph=True.
; needs: create_graph
;   loss.backward(create_graph=True)    torch.autograd.backward(loss, create_graph=True)
(call
  function: (attribute attribute: (identifier) @method)
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @keyword
      value: (true)))
  (#eq? @method "backward")
  (#eq? @keyword "create_graph")) @call
