# expect: attribute 'inner' already defined
# Merging a second set literal is shallow: both give `inner`, although
# both values are sets.
{
  outer.inner.left = 1;
  outer = { inner.right = 2; };
}
