; OOM106 candidates: torch.cuda.empty_cache() however it is imported.
; needs: empty_cache
;   torch.cuda.empty_cache()    cuda.empty_cache()
(call
  function: (attribute attribute: (identifier) @name)
  (#eq? @name "empty_cache")) @call
;   from torch.cuda import empty_cache; empty_cache()
(call
  function: (identifier) @name
  (#eq? @name "empty_cache")) @call
