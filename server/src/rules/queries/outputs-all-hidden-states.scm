; OOM115 candidates: output_hidden_states=True or output_attentions=True passed to a call.
; needs: output_hidden_states output_attentions
;   AutoModel.from_pretrained(name, output_hidden_states=True)    model(**batch, output_attentions=True)
(call
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @keyword
      value: (true)) @argument)
  (#match? @keyword "^output_(hidden_states|attentions)$")) @call
