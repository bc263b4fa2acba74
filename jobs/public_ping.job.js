/*
Name: Ping
Description: The smallest public job: answers {"pong": who}
Author: WebJobs
Version: 1.0.0
Access: public
*/
return { pong: String(params.who || "world") }
