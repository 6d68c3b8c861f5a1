// What a person's role lets the page offer (docs/team.md "Roles"). The
// server decides every request; these only hide what would be refused.
// Keys made before people existed keep the roles admin, write and read.
export const isAdmin = (me) => me?.role === 'admin'
export const isCurator = (me) => ['admin', 'curator', 'write'].includes(me?.role)
export const mayWrite = (me) => !!me && !['read', 'viewer'].includes(me.role)
export const mayReview = (me) => ['admin', 'curator', 'reviewer', 'write'].includes(me?.role)

// ROLES are the roles a person may be given, as the server lists them
// (GET /api/v1/users answers people with these); older servers know only
// admin, write and read.
export const ROLES = ['admin', 'curator', 'annotator', 'reviewer', 'viewer']

// homeOf is where a person lands after sign-in: annotators and reviewers
// on their queue (what to do next), everyone else on the lake.
export const homeOf = (me) => (me?.role === 'annotator' || me?.role === 'reviewer' ? '/queue' : '/')

// teamOnly: annotators and reviewers work in their projects' jobs and have
// no lake-wide reads (the lake, datasets, models, ...): the shell offers
// them their queue and statistics only.
export const teamOnly = (me) => me?.role === 'annotator' || me?.role === 'reviewer'

// when formats a time as the page shows it: date and minutes, local.
export const when = (t) => (t ? new Date(t).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' }) : '')
