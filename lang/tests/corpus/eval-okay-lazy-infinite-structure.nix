let nats = n: { head = n; tail = nats (n + 1); }; take = k: s: if k == 0 then [ ] else [ s.head ] ++ take (k - 1) s.tail; in
take 5 (nats 0)
