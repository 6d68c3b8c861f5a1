package lake

// DrivenBySet is exported for the tests of package lake_test.
var DrivenBySet = drivenBySet
